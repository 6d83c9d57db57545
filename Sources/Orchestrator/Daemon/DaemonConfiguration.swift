import Foundation
import Glibc
import OrchestratorAPI

/// Everything `orchd` is told on its command line and in its environment.
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

    /// The usage text of `orchd --help`.
    public static let usage = """
        OVERVIEW: Run queued commands N at a time, durably (the orchd daemon).

        USAGE: orchd [--state-dir DIR] [--socket PATH] [--concurrency N] [--kill-grace SPAN] [--log-level LEVEL]

        OPTIONS:
          --state-dir DIR      Database, lock and job logs. (default: $ORCHD_STATE_DIR, else
                               $STATE_DIRECTORY, else /var/lib/orchd for root,
                               ${XDG_STATE_HOME:-~/.local/state}/orchd for others)
          --socket PATH        Control socket. (default: $ORCHD_SOCKET, else
                               $RUNTIME_DIRECTORY/orchd.sock, else /run/orchd/orchd.sock for root,
                               $XDG_RUNTIME_DIR/orchd/orchd.sock or /tmp/orchd-$UID/orchd.sock)
          --concurrency N      Jobs run at once per queue. (default: number of CPUs)
          --kill-grace SPAN    Time between SIGTERM and SIGKILL when a job is torn down, in
                               systemd time syntax. (default: 5s)
          --log-level LEVEL    debug, info, warning or error. (default: info)
          -h, --help           Show this help.
          --version            Show the version.

        orchd runs in the foreground and logs to stderr (the journal under systemd).
        Control it with orchctl.
        """

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
        var concurrency = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        var grace: Duration = .seconds(5)
        var level = DaemonLog.Level.info

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
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--state-dir": stateDirectory = try value()
            case "--socket": socket = try value()
            case "--concurrency":
                let text = try value()
                guard let number = Int(text), number >= 1, number <= 10_000 else {
                    throw .invalidValue(name, text, "a whole number from 1 to 10000")
                }
                concurrency = number
            case "--kill-grace":
                let text = try value()
                guard let span = TimeSpan.parse(text) else {
                    throw .invalidValue(name, text, "a time span such as 5s, 500ms or 1min")
                }
                grace = span
            case "--log-level":
                let text = try value()
                guard let parsed = DaemonLog.Level(name: text) else {
                    throw .invalidValue(name, text, "one of debug, info, warning, error")
                }
                level = parsed
            default:
                throw .unknownArgument(argument)
            }
        }
        let absolute = { (path: String) -> String in
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
        return .run(DaemonConfiguration(
            stateDirectory: absolute(OrchdPaths.stateDirectory(explicit: stateDirectory, environment: environment, uid: uid)),
            socketPath: absolute(OrchdPaths.socket(explicit: socket, environment: environment, uid: uid)),
            concurrency: concurrency,
            teardownGrace: grace,
            logLevel: level))
    }
}
