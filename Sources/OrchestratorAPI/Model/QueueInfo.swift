/// A queue's settings and how many of its jobs are in each state.
///
/// JSON: `name, concurrency, paused, retryBaseUSec, retryCapUSec, jobs, hooks`.
public struct QueueInfo: Hashable, Sendable, Codable {
    /// The name.
    public var name: QueueName
    /// Jobs run at once.
    public var concurrency: Int
    /// A paused queue starts nothing new; running jobs go on.
    public var paused: Bool
    /// The first retry's backoff, in microseconds; each further retry doubles it.
    public var retryBaseUSec: Int64
    /// The longest backoff, in microseconds.
    public var retryCapUSec: Int64
    /// The jobs.
    public var jobs: JobCounts
    /// Commands run (with `/bin/sh -c`) on events of this queue's jobs, by event kind; see
    /// `orchctl queue set --help`.
    public var hooks: [String: String]
    /// The most running jobs one user may have in this queue; `nil`: no limit.
    public var maxRunningPerUser: Int?
    /// Running jobs by owner uid (decimal), for admins; `nil` for other callers.
    public var runningPerUser: [String: Int]?

    /// Creates a value with every field given.
    public init(
        name: QueueName, concurrency: Int, paused: Bool, retryBaseUSec: Int64, retryCapUSec: Int64, jobs: JobCounts,
        hooks: [String: String] = [:], maxRunningPerUser: Int? = nil, runningPerUser: [String: Int]? = nil
    ) {
        self.maxRunningPerUser = maxRunningPerUser
        self.runningPerUser = runningPerUser
        self.name = name
        self.concurrency = concurrency
        self.paused = paused
        self.retryBaseUSec = retryBaseUSec
        self.retryCapUSec = retryCapUSec
        self.jobs = jobs
        self.hooks = hooks
    }

    private enum CodingKeys: String, CodingKey {
        case name, concurrency, paused, retryBaseUSec, retryCapUSec, jobs, hooks, maxRunningPerUser, runningPerUser
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(QueueName.self, forKey: .name)
        concurrency = try c.decode(Int.self, forKey: .concurrency)
        paused = try c.decode(Bool.self, forKey: .paused)
        retryBaseUSec = try c.decode(Int64.self, forKey: .retryBaseUSec)
        retryCapUSec = try c.decode(Int64.self, forKey: .retryCapUSec)
        jobs = try c.decode(JobCounts.self, forKey: .jobs)
        hooks = try c.decodeIfPresent([String: String].self, forKey: .hooks) ?? [:]
        maxRunningPerUser = try c.decodeIfPresent(Int.self, forKey: .maxRunningPerUser)
        runningPerUser = try c.decodeIfPresent([String: Int].self, forKey: .runningPerUser)
    }
}
