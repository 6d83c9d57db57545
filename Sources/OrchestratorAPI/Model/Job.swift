import FoundationEssentials

/// A job as the daemon knows it: the submitted ``JobSpec`` plus its identity, state and times.
///
/// JSON (`orchctl status --json`, `io.orchd.Jobs`) is flat and lowerCamel: `id, name, state,
/// result, exitCode, signal, reason, failedDependency, queue, priority, argv, shell, cwd, after,
/// attempt, maxAttempts, submittedAt, startedAt, finishedAt, submitterUid, labels, pid,
/// notBefore, timeoutUSec, uniqueKey, held, suspended`. Times
/// are RFC 3339 UTC with milliseconds; absent values are `null`. The environment is not part of
/// the JSON: it can hold secrets.
public struct Job: Hashable, Sendable, Codable, Identifiable {
    /// The job's ID.
    public var id: JobID
    /// What was submitted.
    public var spec: JobSpec
    /// Where the job is in its life; carries the result when finished.
    public var state: JobState
    /// The attempt running or last run, from 1; 0 before the first start.
    public var attempt: Int
    /// How many attempts the job may take in all (1 = no retries).
    public var maxAttempts: Int { spec.maxAttempts }
    /// The jobs this one waits for.
    public var after: [JobID] { spec.after }
    /// When the job was stored.
    public var submittedAt: Date
    /// When its last attempt started; `nil` before the first.
    public var startedAt: Date?
    /// When it finished; `nil` until then.
    public var finishedAt: Date?
    /// The Unix uid of the client that submitted the job (from `SO_PEERCRED`).
    public var submitterUid: UInt32
    /// The process ID of the job's main process while it runs (also its process group ID).
    public var pid: Int32?
    /// The Slurm job ID of the running attempt, when its queue runs jobs on Slurm (`nil`
    /// otherwise, and while it is being submitted).
    public var slurmJobId: String?
    /// Kept from starting (`orchctl hold`) until released, while waiting or queued.
    public var held: Bool
    /// Running, but its processes are stopped (`orchctl suspend`) until continued.
    public var suspended: Bool

    /// Creates a job value.
    public init(
        id: JobID, spec: JobSpec, state: JobState, attempt: Int = 0, submittedAt: Date, startedAt: Date? = nil, finishedAt: Date? = nil,
        submitterUid: UInt32, pid: Int32? = nil, held: Bool = false, suspended: Bool = false
    ) {
        self.id = id
        self.spec = spec
        self.state = state
        self.attempt = attempt
        self.submittedAt = submittedAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.submitterUid = submitterUid
        self.pid = pid
        self.held = held
        self.suspended = suspended
    }

    // MARK: - Codable

    private enum CodingKeys: String, CodingKey {
        case id, name, state, result, exitCode, signal, reason, failedDependency, queue, priority
        case argv, shell, cwd, after, attempt, maxAttempts, submittedAt, startedAt, finishedAt
        case submitterUid, labels, pid, notBefore, timeoutUSec, uniqueKey, held, suspended, slurmJobId
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(JobID.self, forKey: .id)
        let command: JobCommand
        if let argv = try c.decodeIfPresent([String].self, forKey: .argv) {
            command = .argv(argv)
        } else {
            command = .shell(try c.decode(String.self, forKey: .shell))
        }
        spec = JobSpec(
            command: command,
            cwd: try c.decode(String.self, forKey: .cwd),
            environment: [:],
            queue: try c.decode(QueueName.self, forKey: .queue),
            priority: try c.decode(Int.self, forKey: .priority),
            name: try c.decodeIfPresent(String.self, forKey: .name),
            labels: try c.decodeIfPresent([String: String].self, forKey: .labels) ?? [:],
            after: try c.decodeIfPresent([JobID].self, forKey: .after) ?? [],
            notBefore: try Self.decodeDate(c, .notBefore),
            timeoutUSec: try c.decodeIfPresent(Int64.self, forKey: .timeoutUSec),
            maxAttempts: try c.decode(Int.self, forKey: .maxAttempts),
            uniqueKey: try c.decodeIfPresent(String.self, forKey: .uniqueKey))
        state = try JobState.decode(from: c, state: .state, result: .result, exitCode: .exitCode, signal: .signal,
                                    reason: .reason, failedDependency: .failedDependency)
        attempt = try c.decode(Int.self, forKey: .attempt)
        guard let submittedAt = try Self.decodeDate(c, .submittedAt) else {
            throw DecodingError.valueNotFound(
                String.self, DecodingError.Context(codingPath: c.codingPath + [CodingKeys.submittedAt], debugDescription: "no submittedAt"))
        }
        self.submittedAt = submittedAt
        startedAt = try Self.decodeDate(c, .startedAt)
        finishedAt = try Self.decodeDate(c, .finishedAt)
        submitterUid = try c.decode(UInt32.self, forKey: .submitterUid)
        pid = try c.decodeIfPresent(Int32.self, forKey: .pid)
        slurmJobId = try c.decodeIfPresent(String.self, forKey: .slurmJobId)
        held = try c.decodeIfPresent(Bool.self, forKey: .held) ?? false
        suspended = try c.decodeIfPresent(Bool.self, forKey: .suspended) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(spec.name, forKey: .name)
        try c.encode(state.name, forKey: .state)
        let result = state.result
        try c.encode(result?.name, forKey: .result)
        try c.encode(result?.exitCode, forKey: .exitCode)
        try c.encode(result?.signal, forKey: .signal)
        try c.encode(result?.reason, forKey: .reason)
        try c.encode(result?.failedDependency, forKey: .failedDependency)
        try c.encode(spec.queue, forKey: .queue)
        try c.encode(spec.priority, forKey: .priority)
        switch spec.command {
        case .argv(let argv):
            try c.encode(argv, forKey: .argv)
            try c.encodeNil(forKey: .shell)
        case .shell(let shell):
            try c.encodeNil(forKey: .argv)
            try c.encode(shell, forKey: .shell)
        }
        try c.encode(spec.cwd, forKey: .cwd)
        try c.encode(after, forKey: .after)
        try c.encode(attempt, forKey: .attempt)
        try c.encode(maxAttempts, forKey: .maxAttempts)
        try c.encode(Timestamp.format(submittedAt), forKey: .submittedAt)
        try c.encode(startedAt.map(Timestamp.format), forKey: .startedAt)
        try c.encode(finishedAt.map(Timestamp.format), forKey: .finishedAt)
        try c.encode(submitterUid, forKey: .submitterUid)
        try c.encode(spec.labels, forKey: .labels)
        try c.encode(pid, forKey: .pid)
        try c.encode(spec.notBefore.map(Timestamp.format), forKey: .notBefore)
        try c.encode(spec.timeoutUSec, forKey: .timeoutUSec)
        try c.encode(spec.uniqueKey, forKey: .uniqueKey)
        try c.encodeIfPresent(slurmJobId, forKey: .slurmJobId)
        try c.encode(held, forKey: .held)
        try c.encode(suspended, forKey: .suspended)
    }

    private static func decodeDate(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date? {
        guard let text = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not an RFC 3339 time: \(text)")
        }
        return date
    }
}
