/// A queue's settings and how many of its jobs are in each state.
///
/// JSON: `name, concurrency, paused, retryBaseUSec, retryCapUSec, jobs, hooks, executor, slurm`.
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
    /// Where the queue's jobs run: `local` (the default) or `slurm`; absent from a daemon
    /// that predates executors.
    public var executor: String?
    /// The Slurm settings of a `slurm` queue, and whether Slurm answered orchd's last call;
    /// `nil` for a local queue.
    public var slurm: SlurmSettings?

    /// A Slurm queue's settings (`queue set --executor slurm`).
    ///
    /// JSON: `partition, options, answered, lastError`.
    public struct SlurmSettings: Hashable, Sendable, Codable {
        /// The partition jobs are submitted to (`sbatch --partition`); `nil`: Slurm's default.
        public var partition: String?
        /// More `sbatch` options, each one argument, given before orchd's own.
        public var options: [String]
        /// Whether Slurm answered orchd's last call (sbatch, squeue, scancel); `nil` before the first.
        public var answered: Bool?
        /// What Slurm or its command said when it last did not answer.
        public var lastError: String?

        /// Creates a value with every field given.
        public init(partition: String? = nil, options: [String] = [], answered: Bool? = nil, lastError: String? = nil) {
            self.partition = partition
            self.options = options
            self.answered = answered
            self.lastError = lastError
        }
    }
    /// The most running jobs one user may have in this queue; `nil`: no limit.
    public var maxRunningPerUser: Int?
    /// Running jobs by owner uid (decimal), for admins; `nil` for other callers.
    public var runningPerUser: [String: Int]?

    /// Creates a value with every field given.
    public init(
        name: QueueName, concurrency: Int, paused: Bool, retryBaseUSec: Int64, retryCapUSec: Int64, jobs: JobCounts,
        hooks: [String: String] = [:], maxRunningPerUser: Int? = nil, runningPerUser: [String: Int]? = nil,
        executor: String? = nil, slurm: SlurmSettings? = nil
    ) {
        self.maxRunningPerUser = maxRunningPerUser
        self.runningPerUser = runningPerUser
        self.executor = executor
        self.slurm = slurm
        self.name = name
        self.concurrency = concurrency
        self.paused = paused
        self.retryBaseUSec = retryBaseUSec
        self.retryCapUSec = retryCapUSec
        self.jobs = jobs
        self.hooks = hooks
    }

    private enum CodingKeys: String, CodingKey {
        case name, concurrency, paused, retryBaseUSec, retryCapUSec, jobs, hooks, maxRunningPerUser, runningPerUser, executor, slurm
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
        executor = try c.decodeIfPresent(String.self, forKey: .executor)
        slurm = try c.decodeIfPresent(SlurmSettings.self, forKey: .slurm)
        maxRunningPerUser = try c.decodeIfPresent(Int.self, forKey: .maxRunningPerUser)
        runningPerUser = try c.decodeIfPresent([String: Int].self, forKey: .runningPerUser)
    }
}
