import Foundation
import Glibc
import OrchestratorAPI

/// Everything `orchd` is told on its command line, in its environment and in its
/// configuration file.
public struct DaemonConfiguration: Sendable {
    /// Database, lock file and job logs live here.
    public var stateDirectory: String
    /// The control socket's path.
    public var socketPath: String
    /// Jobs run at once per queue (default: the number of CPUs).
    public var concurrency: Int
    /// How long a torn-down job gets between SIGTERM and SIGKILL (default 5 s).
    public var teardownGrace: Duration
    /// The lowest diagnostic level written.
    public var logLevel: DaemonLog.Level
    /// How long running jobs may finish after SIGTERM before teardown.
    public var drainTimeout: Duration = DaemonSettings.defaultDrainTimeout
    /// Automatic pruning of finished jobs by age (`nil`: off) and count (`nil`: off).
    public var retentionAge: Duration? = nil
    public var retentionCount: Int? = nil
    /// How many events the event log keeps.
    public var eventRetention = DaemonSettings.defaultEventRetention
    /// When replies that report a change go out (`--sync`, `--sync-interval`; start-up only).
    public var sync: SyncPolicy = .always
    /// The configuration file read at start-up and at each reload (SIGHUP); `nil`: none.
    public var configurationFile: String? = nil
    /// Whether a missing ``configurationFile`` is an error (`--config` given) rather than
    /// "no settings" (the default path).
    public var configurationFileRequired = false
    /// How job processes are contained (`--containment`; start-up only).
    public var containment: Containment.Mode = .auto
    /// The settings given as flags; they override the configuration file, at every reload.
    public var commandLineSettings = DaemonSettings()
    /// Executor settings of queues from the configuration file, applied at start and at each
    /// reload (they replace what `queue set` stored for those settings).
    public var queueExecutors: [QueueName: QueueExecutorSettings.Change] = [:]
    /// Test-only (`--test-block-control-queue-on-sigusr1`, not in `--help`): on SIGUSR1 the
    /// daemon blocks its control queue forever, so tests can see the watchdog stop pinging.
    public var testBlockControlQueueOnSIGUSR1 = false

    /// The hidden test-only flag that sets ``testBlockControlQueueOnSIGUSR1``. `main` looks
    /// for it before parsing, to block SIGUSR1 before any thread exists.
    public static let testBlockControlQueueFlag = "--test-block-control-queue-on-sigusr1"

    /// This configuration with the settings of a configuration file applied beneath the
    /// command-line flags: flag, else file, else default.
    /// - Parameter file: what the configuration file says.
    public func applying(file: DaemonSettings) -> DaemonConfiguration {
        let settings = commandLineSettings.overriding(file)
        var result = self
        result.concurrency = settings.concurrency ?? DaemonSettings.defaultConcurrency
        result.teardownGrace = settings.teardownGrace ?? DaemonSettings.defaultTeardownGrace
        result.logLevel = settings.logLevel ?? DaemonSettings.defaultLogLevel
        result.drainTimeout = settings.drainTimeout ?? DaemonSettings.defaultDrainTimeout
        result.retentionAge = settings.retentionAge.flatMap { $0 > .zero ? $0 : nil }
        result.retentionCount = settings.retentionCount.flatMap { $0 > 0 ? $0 : nil }
        result.eventRetention = settings.eventRetention ?? DaemonSettings.defaultEventRetention
        result.sync = settings.sync == "interval" ? .interval(settings.syncInterval ?? SyncPolicy.defaultInterval) : .always
        result.queueExecutors = settings.queueExecutors
        return result
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

    /// The usage text of `orchd --help`.
    public static let usage = """
        OVERVIEW: Run queued commands N at a time, durably (the orchd daemon).

        USAGE: orchd [--state-dir DIR] [--socket PATH] [--containment MODE] [--config PATH] [--concurrency N]
                     [--kill-grace SPAN] [--drain-timeout SPAN] [--retention-age SPAN] [--retention-count N]
                     [--event-retention N] [--sync MODE] [--sync-interval SPAN] [--log-level LEVEL]

        OPTIONS:
          --state-dir DIR      Database, lock and job logs. (default: $ORCHD_STATE_DIR, else
                               $STATE_DIRECTORY, else /var/lib/orchd for root,
                               ${XDG_STATE_HOME:-~/.local/state}/orchd for others)
          --socket PATH        Control socket, unless systemd passes one (orchd.socket).
                               (default: $ORCHD_SOCKET, else $RUNTIME_DIRECTORY/orchd.sock, else
                               /run/orchd/orchd.sock for root, $XDG_RUNTIME_DIR/orchd/orchd.sock
                               or /tmp/orchd-$UID/orchd.sock)
          --containment MODE   How each job's processes, setsid'ed ones too, are kept hold of:
                               cgroup (a cgroup v2 group per job; refuse to start without a
                               writable cgroup2 subtree), process-group (the fallback: the
                               job's process group and the processes carrying its
                               ORCHD_JOB_ID), or auto. (default: auto, cgroup where possible)
          --config PATH        Configuration file of 'key = value' lines (any option below
                               without its dashes), read again on SIGHUP; flags override it.
                               (default: /etc/orchd/orchd.conf for root,
                               ${XDG_CONFIG_HOME:-~/.config}/orchd/orchd.conf for others; may
                               be missing)
          --concurrency N      Jobs run at once per queue. (default: number of CPUs)
          --kill-grace SPAN    Time between SIGTERM and SIGKILL when a job is torn down, in
                               systemd time syntax. (default: 5s)
          --drain-timeout SPAN How long running jobs may finish by themselves after SIGTERM
                               before they are torn down. (default: 10s)
          --retention-age SPAN Prune finished jobs (and their logs) as soon as they are older
                               than this. (default: 0, keep them)
          --retention-count N  Keep at most the newest N finished jobs, pruning as jobs
                               finish. (default: 0, no limit)
          --event-retention N  Events kept for 'orchctl events --since'; the log may run 1%
                               over before it is trimmed. (default: 100000)
          --sync MODE          When a reply that reports a change goes out: always (once it
                               is on disk: survives a power loss) or interval (once it is
                               committed: survives a crash of orchd; on disk within
                               --sync-interval). Start-up only. (default: always)
          --sync-interval SPAN With --sync interval, the longest a committed change waits for
                               its fsync. (default: 100ms)
          --log-level LEVEL    debug, info, warning or error. (default: info)
          -h, --help           Show this help.
          --version            Show the version.

        orchd runs in the foreground and logs to stderr (the journal under systemd).
        SIGHUP reloads the configuration file; SIGTERM stops. Control it with orchctl.
        """

    /// The one-line usage printed after a command-line error.
    public static let shortUsage =
        "orchd [--state-dir DIR] [--socket PATH] [--containment MODE] [--config PATH] [--concurrency N] [--kill-grace SPAN] [--drain-timeout SPAN] [--retention-age SPAN] [--retention-count N] [--event-retention N] [--sync MODE] [--sync-interval SPAN] [--log-level LEVEL]"

    /// What parsing the command line asked for.
    public enum Invocation: Sendable {
        case run(DaemonConfiguration)
        case help
        case version
    }

    /// Parses `orchd`'s arguments.
    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - environment: the process environment, for the default paths.
    ///   - uid: the effective uid, for the default paths.
    /// - Throws: ``DaemonConfigurationError`` for an unknown option, a missing or bad value.
    public static func parse(
        _ arguments: [String], environment: [String: String], uid: UInt32
    ) throws(DaemonConfigurationError) -> Invocation {
        var stateDirectory: String?
        var socket: String?
        var configurationFile: String?
        var settings = DaemonSettings()
        var testBlockControlQueue = false
        var containment = Containment.Mode.auto

        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(DaemonConfigurationError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw .missingValue(name) }
                return next
            }
            // An explicitly empty path is a mistake (an unset variable in a script, say), not
            // a request for the default: the default socket may be the system daemon's.
            func path() throws(DaemonConfigurationError) -> String {
                let text = try value()
                guard !text.isEmpty else { throw .invalidValue(name, text, "the path is empty; leave the option out for the default") }
                return text
            }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--state-dir": stateDirectory = try path()
            case "--socket": socket = try path()
            case "--config": configurationFile = try path()
            case "--containment":
                let text = try value()
                guard let mode = Containment.Mode(rawValue: text) else {
                    throw .invalidValue(name, text, "expected auto, cgroup or process-group")
                }
                containment = mode
            case testBlockControlQueueFlag where inlineValue == nil: testBlockControlQueue = true
            default:
                guard name.hasPrefix("--"), let setting = DaemonSetting(rawValue: String(name.dropFirst(2))) else {
                    throw .unknownArgument(argument)
                }
                let text = try value()
                if let problem = setting.apply(text, to: &settings) {
                    throw .invalidValue(name, text, problem)
                }
            }
        }
        let absolute = { (path: String) -> String in
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
        var configuration = DaemonConfiguration(
            stateDirectory: absolute(OrchdPaths.stateDirectory(explicit: stateDirectory, environment: environment, uid: uid)),
            socketPath: absolute(OrchdPaths.socket(explicit: socket, environment: environment, uid: uid)),
            concurrency: DaemonSettings.defaultConcurrency,
            teardownGrace: DaemonSettings.defaultTeardownGrace,
            logLevel: DaemonSettings.defaultLogLevel)
        configuration.configurationFile = absolute(configurationFile ?? defaultConfigurationFile(environment: environment, uid: uid))
        configuration.configurationFileRequired = configurationFile != nil
        configuration.commandLineSettings = settings
        configuration.testBlockControlQueueOnSIGUSR1 = testBlockControlQueue
        configuration.containment = containment
        // Flags alone until the daemon reads the file (Daemon.run), where a bad file is a
        // start-up failure reported to systemd rather than a usage error.
        return .run(configuration.applying(file: DaemonSettings()))
    }
}
