import CommandLineParsing
import Foundation
import Glibc
import OrchestratorAPI

/// orchd's configuration: every option of the daemon in one value, from its command line, its
/// configuration file and the defaults.
///
/// Precedence, for every setting and at every reload (SIGHUP, `orchctl reload`): the command
/// line, else the configuration file, else the default. The command line's values are kept
/// (``commandLine``) so that a reload applies them over the file again.
///
/// The options are declared once (``bindings``): the command line is parsed against them by
/// the parser orchctl uses (``ArgumentParser``), each `key = value` line of the file is checked
/// and stored by the same declaration (its key is the long option name,
/// ``ConfigurationFile``), and `orchd --help` is rendered from them (``help``).
public struct DaemonConfiguration: CommandOptions {
    /// Database, lock file and job logs live here (absolute once parsed).
    public var stateDirectory = ""
    /// The control socket's path (absolute once parsed).
    public var socketPath = ""
    /// The configuration file read at start-up and at each reload; `nil`: none.
    public var configurationFile: String? = nil
    /// Whether a missing ``configurationFile`` is an error (`--config` given) rather than
    /// "no settings" (the default path).
    public var configurationFileRequired = false
    /// How job processes are contained (`--containment`; start-up only).
    public var containment: Containment.Mode = .auto
    /// Jobs run at once per queue (default: the number of CPUs).
    public var concurrency = Self.defaultConcurrency
    /// How long a torn-down job gets between SIGTERM and SIGKILL (`--kill-grace`).
    public var teardownGrace: Duration = .seconds(5)
    /// The lowest diagnostic level written.
    public var logLevel: DaemonLog.Level = .info
    /// How long running jobs may finish after SIGTERM before teardown; 10 s by default,
    /// within the unit's TimeoutStopSec=30s.
    public var drainTimeout: Duration = .seconds(10)
    /// Finished jobs older than this are pruned automatically; `nil` (given as 0): never.
    public var retentionAge: Duration? = nil
    /// At most this many finished jobs are kept; `nil` (given as 0): no limit.
    public var retentionCount: Int? = nil
    /// How many of the newest events the event log keeps.
    public var eventRetention = 100_000
    /// Whether replies that report a change wait for an `fsync` (`--sync always`) or only for
    /// the commit (`--sync interval`); start-up only.
    public var syncsAtInterval = false
    /// The longest a committed change waits for its `fsync` under `--sync interval`.
    public var syncInterval = SyncPolicy.defaultInterval
    /// Who may submit to the system service (`--allow-users`; default: every user).
    public var allowedUsers: AllowedUsers = .all
    /// Members of this group are admins (`--admin-group`; default `orchd`).
    public var adminGroup = AccessPolicy.defaultAdminGroup
    /// The most running jobs one user may have in a queue that sets no limit of its own
    /// (`--max-running-per-user`); `nil` (given as 0): no limit.
    public var maxRunningPerUser: Int? = nil
    /// The queues the configuration file declares (`queue.NAME` lines); declared at start-up
    /// and at each reload. Only the file declares queues this way.
    public var queues: [Scheduler.ConfiguredQueue] = []
    /// Test-only (``testBlockControlQueueFlag``, not in `--help`): on SIGUSR1 the daemon
    /// blocks its control queue forever, so tests can see the watchdog stop pinging.
    public var testBlockControlQueueOnSIGUSR1 = false
    /// The settings given on the command line, by option name, applied over the file's at
    /// start-up and at every reload.
    public var commandLine: [String: ParsedValue] = [:]

    /// Every setting at its default, no path resolved yet.
    public init() {}

    /// When replies that report a change go out (`--sync`, `--sync-interval`).
    public var sync: SyncPolicy { syncsAtInterval ? .interval(syncInterval) : .always }

    /// Default concurrency: the number of online CPUs.
    public static var defaultConcurrency: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The hidden test-only flag that sets ``testBlockControlQueueOnSIGUSR1``. `main` looks
    /// for it before parsing, to block SIGUSR1 before any thread exists.
    public static let testBlockControlQueueFlag = "--test-block-control-queue-on-sigusr1"

    // MARK: - Declarations

    /// The options a configuration file may set: those a reload may change, and the sync
    /// policy. Paths and containment are facts of the start and come from the command line
    /// only.
    public static let fileKeys = [
        "concurrency", "kill-grace", "log-level", "drain-timeout", "retention-age", "retention-count",
        "event-retention", "sync", "sync-interval", "allow-users", "admin-group", "max-running-per-user",
    ]

    /// Every option, in the order `orchd --help` lists them.
    public static let bindings: [OptionBinding<DaemonConfiguration>] = [
        .value(
            \.stateDirectory, "state-dir", "dir", kind: .path, help: "Database, lock and job logs.",
            default: "$ORCHD_STATE_DIR, else $STATE_DIRECTORY, else /var/lib/orchd for root, ${XDG_STATE_HOME:-~/.local/state}/orchd for others"),
        .value(
            \.socketPath, "socket", "path", kind: .path, help: "Control socket, unless systemd passes one (orchd.socket).",
            default: "$ORCHD_SOCKET, else $RUNTIME_DIRECTORY/orchd.sock, else /run/orchd/orchd.sock for root, $XDG_RUNTIME_DIR/orchd/orchd.sock or /tmp/orchd-$UID/orchd.sock"),
        OptionBinding(
            spec: .value(
                "containment", "mode", kind: .choice(Containment.Mode.allCases.map(\.rawValue)),
                help: "How each job's processes, setsid'ed ones too, are kept hold of: cgroup (a cgroup v2 group per job; refuse to start without a writable cgroup2 subtree), process-group (the fallback: the job's process group and the processes carrying its ORCHD_JOB_ID), or auto.",
                default: "auto, cgroup where possible")
        ) { configuration, value in
            configuration.containment = choice(value, Containment.Mode.init(rawValue:))
        },
        OptionBinding(
            spec: .value(
                "config", "path", kind: .path,
                help: "Configuration file of 'key = value' lines, read again on SIGHUP; its keys are these options without the dashes: \(fileKeys.joined(separator: ", ")); 'queue.NAME = concurrency=N, retry-base=SPAN, retry-cap=SPAN, max-running-per-user=N, executor=local|slurm, slurm-partition=P, slurm-option=OPTION' lines declare queues. The command line overrides the file.",
                default: "/etc/orchd/orchd.conf for root, ${XDG_CONFIG_HOME:-~/.config}/orchd/orchd.conf for others; may be missing")
        ) { configuration, value in
            guard case .text(let path) = value else { preconditionFailure("--config is declared as a path") }
            configuration.configurationFile = path
            configuration.configurationFileRequired = true
        },
        .value(\.concurrency, "concurrency", "n", kind: .integerIn(1...10_000), help: "Jobs run at once per queue.", default: "number of CPUs"),
        .value(
            \.teardownGrace, "kill-grace", "span", kind: .timeSpan,
            help: "Time between SIGTERM and SIGKILL when a job is torn down, in systemd time syntax.", default: "5s"),
        .value(
            \.drainTimeout, "drain-timeout", "span", kind: .timeSpan,
            help: "How long running jobs may finish by themselves after SIGTERM before they are torn down.", default: "10s"),
        OptionBinding(
            spec: .value(
                "retention-age", "span", kind: .timeSpan,
                help: "Prune finished jobs (and their logs) as soon as they are older than this.", default: "0, keep them")
        ) { configuration, value in
            guard case .timeSpan(let microseconds) = value else { preconditionFailure("--retention-age is declared as a span") }
            configuration.retentionAge = microseconds > 0 ? Duration(microseconds: microseconds) : nil
        },
        OptionBinding(
            spec: .value(
                "retention-count", "n", kind: .integerIn(0...Int.max),
                help: "Keep at most the newest N finished jobs, pruning as jobs finish.", default: "0, no limit")
        ) { configuration, value in
            guard case .integer(let count) = value else { preconditionFailure("--retention-count is declared as a number") }
            configuration.retentionCount = count > 0 ? count : nil
        },
        .value(
            \.eventRetention, "event-retention", "n", kind: .integerIn(1000...Int.max),
            help: "Events kept for 'orchctl events --since'; the log may run 1% over before it is trimmed.", default: "100000"),
        OptionBinding(
            spec: .value(
                "sync", "mode", kind: .choice(["always", "interval"]),
                help: "When a reply that reports a change goes out: always (once it is on disk: survives a power loss) or interval (once it is committed: survives a crash of orchd; on disk within --sync-interval). Start-up only.",
                default: "always")
        ) { configuration, value in
            configuration.syncsAtInterval = choice(value) { $0 == "interval" ? true : $0 == "always" ? false : nil }
        },
        .value(
            \.syncInterval, "sync-interval", "span", kind: .timeSpanIn(.milliseconds(1) ... .seconds(3600)),
            help: "With --sync interval, the longest a committed change waits for its fsync.", default: "100ms"),
        OptionBinding(
            spec: .value("log-level", "level", kind: .choice(["debug", "info", "warning", "error"]), help: "The lowest level logged: debug, info, warning or error; job events are info, those of jobs that failed warning.", default: "info")
        ) { configuration, value in
            configuration.logLevel = choice(value, DaemonLog.Level.init(name:))
        },
        OptionBinding(
            spec: .value(
                "allow-users", "list", kind: .rule(allowUsersRule),
                help: "Who may submit to a root orchd: all, or user names and @groups, separated by commas or spaces.", default: "all")
        ) { configuration, value in
            configuration.allowedUsers = choice(value, AllowedUsers.init)
        },
        OptionBinding(
            spec: .value(
                "admin-group", "group", kind: .rule(groupNameRule),
                help: "Members manage every user's jobs and the queues, as root does.", default: AccessPolicy.defaultAdminGroup)
        ) { configuration, value in
            configuration.adminGroup = choice(value) { $0 }
        },
        OptionBinding(
            spec: .value(
                "max-running-per-user", "n", kind: .integerIn(0...10_000),
                help: "The most running jobs one user may have in a queue that sets no limit of its own; 0: no limit.", default: "0")
        ) { configuration, value in
            guard case .integer(let limit) = value else { preconditionFailure("--max-running-per-user is declared as a number") }
            configuration.maxRunningPerUser = limit > 0 ? limit : nil
        },
        .flag(\.testBlockControlQueueOnSIGUSR1, String(testBlockControlQueueFlag.dropFirst(2)), help: "", hidden: true),
    ]

    /// orchd as one command without a command word, for the parser and the help renderer.
    public static let command = CommandSpec(
        name: "orchd",
        abstract: "Run queued commands N at a time, durably (the orchd daemon).",
        discussion: """
            orchd runs in the foreground and logs to stderr (the journal under systemd). SIGHUP \
            reloads the configuration file; SIGTERM stops. Control it with orchctl.
            Each setting is taken from the command line, else the configuration file (--config), \
            else its default, at start-up and at every reload.
            """,
        usage: bindings.map(\.spec).filter { !$0.isHidden }.map { "[\($0.label)]" }.joined(separator: " "),
        arguments: [],
        options: bindings.map(\.spec))

    /// The help renderer for orchd: its options, then `--version` and `-h, --help`.
    private static var renderer: HelpRenderer { HelpRenderer(program: "orchd", commands: [], globalOptions: [GlobalOptions.version]) }

    /// The text of `orchd --help`.
    public static var help: String { renderer.help(for: command) }

    /// The usage line printed after a command-line error.
    public static var usage: String { renderer.usage(for: command) }

    /// `--allow-users`: what ``AllowedUsers`` reads, so the value the binding stores is the one
    /// the parser let through.
    static let allowUsersRule = TextRule("allow-users") { text in
        AllowedUsers(text) == nil ? "'\(text)' is not 'all' or user names and @groups separated by commas or spaces" : nil
    }

    /// `--admin-group`: one group name (no separators of `/etc/group` or of lists).
    static let groupNameRule = TextRule("group-name") { text in
        text.isEmpty || text.contains(where: { $0 == " " || $0 == "," || $0 == ":" || $0 == "/" || $0.isWhitespace })
            ? "'\(text)' is not a group name (no spaces, commas, colons or slashes)" : nil
    }

    /// The value of a `.choice` or `.rule` option as its type: the parser admitted only the
    /// declared words (or what the rule accepts), so a word `make` does not know is a
    /// declaration out of step with the type.
    private static func choice<Value>(_ value: ParsedValue, _ make: (String) -> Value?) -> Value {
        guard case .text(let word) = value, let result = make(word) else { preconditionFailure("a choice option declares '\(value)', which its field cannot hold") }
        return result
    }

    // MARK: - Parsing and layering

    /// What orchd's command line asks for.
    public enum Outcome: Sendable {
        /// Run the daemon with this configuration (the file not yet applied).
        case run(DaemonConfiguration)
        /// Print ``help`` and exit 0.
        case help
        /// Print the version and exit 0.
        case version
    }

    /// Parses `orchd`'s arguments with orchctl's parser.
    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - environment: the process environment, for the default paths.
    ///   - uid: the effective uid, for the default paths.
    /// - Returns: the configuration of the command line over the defaults, its paths
    ///   resolved and absolute; the daemon applies the configuration file beneath it
    ///   (``applying(file:)``) when it starts, where a bad file is a start-up failure reported
    ///   to systemd rather than a usage error.
    /// - Throws: ``CommandLineError`` for an unknown option, a missing or bad value, or a
    ///   stray argument.
    public static func parse(
        _ arguments: [String], environment: [String: String], uid: UInt32
    ) throws(CommandLineError) -> Outcome {
        let invocation: CommandLineParsing.Invocation
        switch try ArgumentParser(command: command).parse(arguments) {
        case .help: return .help
        case .version: return .version
        case .run(let parsed): invocation = parsed
        }
        var configuration = DaemonConfiguration(decoding: invocation)
        configuration.commandLine = invocation.values.compactMapValues(\.last).filter { fileKeys.contains($0.key) }
        let absolute = { (path: String) -> String in
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
        let explicit = { (path: String) in path.isEmpty ? nil : path }
        configuration.stateDirectory = absolute(
            OrchdPaths.stateDirectory(explicit: explicit(configuration.stateDirectory), environment: environment, uid: uid))
        configuration.socketPath = absolute(
            OrchdPaths.socket(explicit: explicit(configuration.socketPath), environment: environment, uid: uid))
        configuration.configurationFile = absolute(
            configuration.configurationFile ?? defaultConfigurationFile(environment: environment, uid: uid))
        return .run(configuration)
    }

    /// This configuration with a configuration file's settings: the command line's
    /// (``commandLine``) over the file's over the defaults, and the file's queue declarations
    /// (``queues``: only the file declares them). The start-up facts (paths, containment, the
    /// test flag) stay as they are.
    /// - Parameter file: the file's settings by key and its queue declarations
    ///   (``ConfigurationFile/load(path:required:)``); every value was checked against its
    ///   option's declaration.
    public func applying(file: ConfigurationFile.Contents) -> DaemonConfiguration {
        var result = DaemonConfiguration()
        result.stateDirectory = stateDirectory
        result.socketPath = socketPath
        result.configurationFile = configurationFile
        result.configurationFileRequired = configurationFileRequired
        result.containment = containment
        result.testBlockControlQueueOnSIGUSR1 = testBlockControlQueueOnSIGUSR1
        result.commandLine = commandLine
        result.set(file.settings)
        result.set(commandLine)
        result.queues = file.queues
        return result
    }

    /// Stores each value through its option's binding, in declaration order.
    private mutating func set(_ values: [String: ParsedValue]) {
        for binding in Self.bindings {
            if let value = values[binding.spec.name] { binding.apply(&self, value) }
        }
    }

    /// The configuration file read when `--config` is not given: `/etc/orchd/orchd.conf`
    /// for root, `${XDG_CONFIG_HOME:-$HOME/.config}/orchd/orchd.conf` for other users.
    /// - Parameters:
    ///   - environment: the process environment.
    ///   - uid: the effective uid.
    public static func defaultConfigurationFile(environment: [String: String], uid: UInt32) -> String {
        if uid == 0 { return "/etc/orchd/orchd.conf" }
        if let value = environment["XDG_CONFIG_HOME"], value.hasPrefix("/") { return value + "/orchd/orchd.conf" }
        var home = "/tmp"
        if let value = environment["HOME"], value.hasPrefix("/") {
            home = value
        } else if let entry = getpwuid(uid), let directory = entry.pointee.pw_dir {
            home = String(cString: directory)
        }
        return home + "/.config/orchd/orchd.conf"
    }
}
