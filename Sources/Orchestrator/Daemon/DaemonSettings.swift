import Glibc
import OrchestratorAPI

/// The settings that can come from the command line or from the configuration file, and that a
/// reload (SIGHUP) changes at run time. `nil` means "not given here".
public struct DaemonSettings: Sendable, Equatable {
    /// Jobs run at once per queue.
    public var concurrency: Int?
    /// Time between SIGTERM and SIGKILL when a job is torn down.
    public var teardownGrace: Duration?
    /// The lowest diagnostic level written.
    public var logLevel: DaemonLog.Level?

    public init(concurrency: Int? = nil, teardownGrace: Duration? = nil, logLevel: DaemonLog.Level? = nil) {
        self.concurrency = concurrency
        self.teardownGrace = teardownGrace
        self.logLevel = logLevel
    }

    /// These settings where given, else `other`'s: command-line flags override the file.
    public func overriding(_ other: DaemonSettings) -> DaemonSettings {
        DaemonSettings(
            concurrency: concurrency ?? other.concurrency,
            teardownGrace: teardownGrace ?? other.teardownGrace,
            logLevel: logLevel ?? other.logLevel)
    }

    /// Default concurrency: the number of online CPUs.
    public static var defaultConcurrency: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
    /// Default teardown grace: 5 seconds.
    public static let defaultTeardownGrace: Duration = .seconds(5)
    /// Default log level: info.
    public static let defaultLogLevel: DaemonLog.Level = .info
}

/// One setting, named the same as a flag (`--kill-grace`) and as a configuration file key
/// (`kill-grace = 10s`), so that both are parsed and checked by the same code.
public enum DaemonSetting: String, CaseIterable, Sendable {
    case concurrency = "concurrency"
    case killGrace = "kill-grace"
    case logLevel = "log-level"

    /// The command-line flag, `--` and the key.
    public var flag: String { "--" + rawValue }

    /// What a valid value looks like, for error messages.
    public var expected: String {
        switch self {
        case .concurrency: "a whole number from 1 to 10000"
        case .killGrace: "a time span such as 5s, 500ms or 1min"
        case .logLevel: "one of debug, info, warning, error"
        }
    }

    /// Parses `text` and stores it in `settings`.
    /// - Returns: false when `text` is not a valid value (``expected`` says what is).
    public func apply(_ text: String, to settings: inout DaemonSettings) -> Bool {
        switch self {
        case .concurrency:
            guard let number = Int(text), number >= 1, number <= 10_000 else { return false }
            settings.concurrency = number
        case .killGrace:
            guard let span = TimeSpan.parse(text) else { return false }
            settings.teardownGrace = span
        case .logLevel:
            guard let level = DaemonLog.Level(name: text) else { return false }
            settings.logLevel = level
        }
        return true
    }
}
