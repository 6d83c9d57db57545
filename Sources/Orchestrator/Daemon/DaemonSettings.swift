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
    /// How long running jobs may go on finishing after SIGTERM before they are torn down.
    public var drainTimeout: Duration?
    /// Finished jobs older than this are pruned automatically (zero: never).
    public var retentionAge: Duration?
    /// At most this many finished jobs are kept (0: no limit).
    public var retentionCount: Int?
    /// How many of the newest events the event log keeps.
    public var eventRetention: Int?
    /// `always` or `interval` (`--sync`); read at start-up only.
    public var sync: String?
    /// The barrier interval of `--sync interval` (`--sync-interval`); read at start-up only.
    public var syncInterval: Duration?
    /// Executor settings of queues, by queue (configuration file only: `queue.NAME.executor`,
    /// `queue.NAME.slurm-partition`, `queue.NAME.slurm-option`).
    public var queueExecutors: [QueueName: QueueExecutorSettings.Change] = [:]

    /// Creates a value with every field given.
    public init(
        concurrency: Int? = nil, teardownGrace: Duration? = nil, logLevel: DaemonLog.Level? = nil,
        drainTimeout: Duration? = nil, retentionAge: Duration? = nil, retentionCount: Int? = nil, eventRetention: Int? = nil,
        sync: String? = nil, syncInterval: Duration? = nil
    ) {
        self.sync = sync
        self.syncInterval = syncInterval
        self.concurrency = concurrency
        self.teardownGrace = teardownGrace
        self.logLevel = logLevel
        self.drainTimeout = drainTimeout
        self.retentionAge = retentionAge
        self.retentionCount = retentionCount
        self.eventRetention = eventRetention
    }

    /// These settings where given, else `other`'s: command-line flags override the file.
    public func overriding(_ other: DaemonSettings) -> DaemonSettings {
        var result = DaemonSettings(
            concurrency: concurrency ?? other.concurrency,
            teardownGrace: teardownGrace ?? other.teardownGrace,
            logLevel: logLevel ?? other.logLevel,
            drainTimeout: drainTimeout ?? other.drainTimeout,
            retentionAge: retentionAge ?? other.retentionAge,
            retentionCount: retentionCount ?? other.retentionCount,
            eventRetention: eventRetention ?? other.eventRetention,
            sync: sync ?? other.sync, syncInterval: syncInterval ?? other.syncInterval)
        result.queueExecutors = other.queueExecutors.merging(queueExecutors) { $1 }
        return result
    }

    /// Default concurrency: the number of online CPUs.
    public static var defaultConcurrency: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
    /// Default teardown grace: 5 seconds.
    public static let defaultTeardownGrace: Duration = .seconds(5)
    /// Default log level: info.
    public static let defaultLogLevel: DaemonLog.Level = .info
    /// Default drain after SIGTERM: 10 seconds, within the unit's TimeoutStopSec=30s.
    public static let defaultDrainTimeout: Duration = .seconds(10)
    /// Default event log size: the newest 100,000 events.
    public static let defaultEventRetention = 100_000
}

/// One setting, named the same as a flag (`--kill-grace`) and as a configuration file key
/// (`kill-grace = 10s`), so that both are parsed and checked by the same code.
public enum DaemonSetting: String, CaseIterable, Sendable {
    case concurrency = "concurrency"
    case killGrace = "kill-grace"
    case logLevel = "log-level"
    case drainTimeout = "drain-timeout"
    case retentionAge = "retention-age"
    case retentionCount = "retention-count"
    case eventRetention = "event-retention"
    case sync = "sync"
    case syncInterval = "sync-interval"

    /// The command-line flag, `--` and the key.
    public var flag: String { "--" + rawValue }

    /// What a valid value looks like, for error messages.
    public var expected: String {
        switch self {
        case .concurrency: "a whole number from 1 to 10000"
        case .killGrace: "a time span such as 5s, 500ms or 1min"
        case .logLevel: "one of debug, info, warning, error"
        case .drainTimeout, .retentionAge: "a time span such as 0, 30s or 7d"
        case .retentionCount: "a whole number, 0 for no limit"
        case .eventRetention: "a whole number from 1000"
        case .sync: "always or interval"
        case .syncInterval: "a time span from 1ms to 1h, such as 100ms"
        }
    }

    /// Parses `text` and stores it in `settings`.
    /// - Returns: `nil` when stored, else what is wrong with `text` ("expected ...", or for
    ///   a span the span parser's own reason, such as "cannot be negative").
    public func apply(_ text: String, to settings: inout DaemonSettings) -> String? {
        let expectation = "expected \(expected)"
        switch self {
        case .concurrency:
            guard let number = Int(text), number >= 1, number <= 10_000 else { return expectation }
            settings.concurrency = number
        case .killGrace:
            switch Self.span(text) {
            case .success(let span): settings.teardownGrace = span
            case .failure(let problem): return problem.message
            }
        case .logLevel:
            guard let level = DaemonLog.Level(name: text) else { return expectation }
            settings.logLevel = level
        case .drainTimeout:
            switch Self.span(text) {
            case .success(let span): settings.drainTimeout = span
            case .failure(let problem): return problem.message
            }
        case .retentionAge:
            switch Self.span(text) {
            case .success(let span): settings.retentionAge = span
            case .failure(let problem): return problem.message
            }
        case .retentionCount:
            guard let number = Int(text), number >= 0 else { return expectation }
            settings.retentionCount = number
        case .eventRetention:
            guard let number = Int(text), number >= 1000 else { return expectation }
            settings.eventRetention = number
        case .sync:
            guard text == "always" || text == "interval" else { return expectation }
            settings.sync = text
        case .syncInterval:
            switch Self.span(text) {
            case .success(let span):
                guard span >= .milliseconds(1), span <= .seconds(3600) else { return expectation }
                settings.syncInterval = span
            case .failure(let problem): return problem.message
            }
        }
        return nil
    }

    /// A span setting's value, or why it is not one.
    private static func span(_ text: String) -> Result<Duration, TimeSpan.Invalid> {
        Result { () throws(TimeSpan.Invalid) in Duration(microseconds: try TimeSpan.parseMicroseconds(text)) }
    }
}
