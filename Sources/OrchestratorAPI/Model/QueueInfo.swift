/// A queue's settings and how many of its jobs are in each state.
///
/// JSON: `name, concurrency, paused, retryBaseUSec, retryCapUSec, jobs`.
public struct QueueInfo: Hashable, Sendable, Codable {
    public var name: QueueName
    /// Jobs run at once.
    public var concurrency: Int
    /// A paused queue starts nothing new; running jobs go on.
    public var paused: Bool
    /// The first retry's backoff, in microseconds; each further retry doubles it.
    public var retryBaseUSec: Int64
    /// The longest backoff, in microseconds.
    public var retryCapUSec: Int64
    public var jobs: JobCounts

    public init(name: QueueName, concurrency: Int, paused: Bool, retryBaseUSec: Int64, retryCapUSec: Int64, jobs: JobCounts) {
        self.name = name
        self.concurrency = concurrency
        self.paused = paused
        self.retryBaseUSec = retryBaseUSec
        self.retryCapUSec = retryCapUSec
        self.jobs = jobs
    }
}
