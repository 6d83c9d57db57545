import OrchestratorAPI

/// A queue's stored settings; `nil` fields take the daemon's defaults.
public struct QueueSettings: Hashable, Sendable {
    /// The name.
    public var name: QueueName
    /// Jobs run at once; `nil` for the daemon's `--concurrency`.
    public var concurrency: Int?
    public var paused: Bool
    /// Backoff before the first retry, in microseconds; `nil` for the default.
    public var retryBaseUSec: Int64?
    /// Longest backoff, in microseconds; `nil` for the default.
    public var retryCapUSec: Int64?
    /// Hook commands by event kind.
    public var hooks: [String: String]
    /// The most running jobs one user may have; `nil` for the daemon's `max-running-per-user`.
    public var maxRunningPerUser: Int?
    /// Where its jobs run.
    public var executor: QueueExecutorSettings

    /// Creates a value with every field given.
    public init(
        name: QueueName, concurrency: Int? = nil, paused: Bool = false, retryBaseUSec: Int64? = nil, retryCapUSec: Int64? = nil,
        hooks: [String: String] = [:], maxRunningPerUser: Int? = nil, executor: QueueExecutorSettings = QueueExecutorSettings()
    ) {
        self.maxRunningPerUser = maxRunningPerUser
        self.executor = executor
        self.name = name
        self.concurrency = concurrency
        self.paused = paused
        self.retryBaseUSec = retryBaseUSec
        self.retryCapUSec = retryCapUSec
        self.hooks = hooks
    }
}
