import FoundationEssentials

/// One run of a job: every attempt is recorded when it ends, so a job retried twice has three.
///
/// JSON: `attempt, startedAt, finishedAt, result, exitCode, signal, reason` (times RFC 3339).
public struct JobAttempt: Hashable, Sendable, Codable {
    /// The attempt number, from 1.
    public var attempt: Int
    /// When its process started; `nil` when it never started (spawn failure).
    public var startedAt: Date?
    /// When it finished; `nil` until then.
    public var finishedAt: Date
    /// How it ended.
    public var result: JobResult
    /// The Slurm job ID it ran as, when its queue ran it on Slurm; JSON `slurmJobId`, absent
    /// otherwise.
    public var slurmJobId: String?

    /// Creates a value with every field given.
    public init(attempt: Int, startedAt: Date?, finishedAt: Date, result: JobResult, slurmJobId: String? = nil) {
        self.slurmJobId = slurmJobId
        self.attempt = attempt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.result = result
    }

    private enum CodingKeys: String, CodingKey {
        case attempt, startedAt, finishedAt, result, exitCode, signal, reason, failedDependency, slurmJobId
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        attempt = try c.decode(Int.self, forKey: .attempt)
        startedAt = try c.decodeIfPresent(String.self, forKey: .startedAt).flatMap(Timestamp.parse)
        guard let finished = Timestamp.parse(try c.decode(String.self, forKey: .finishedAt)) else {
            throw DecodingError.dataCorruptedError(forKey: .finishedAt, in: c, debugDescription: "not an RFC 3339 time")
        }
        finishedAt = finished
        let name = try c.decode(String.self, forKey: .result)
        guard let result = JobResult(
            name: name, exitCode: try c.decodeIfPresent(Int32.self, forKey: .exitCode),
            signal: try c.decodeIfPresent(Int32.self, forKey: .signal),
            reason: try c.decodeIfPresent(String.self, forKey: .reason),
            failedDependency: try c.decodeIfPresent(JobID.self, forKey: .failedDependency))
        else {
            throw DecodingError.dataCorruptedError(forKey: .result, in: c, debugDescription: "unknown result '\(name)'")
        }
        self.result = result
        slurmJobId = try c.decodeIfPresent(String.self, forKey: .slurmJobId)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(attempt, forKey: .attempt)
        try c.encode(startedAt.map(Timestamp.format), forKey: .startedAt)
        try c.encode(Timestamp.format(finishedAt), forKey: .finishedAt)
        try c.encode(result.name, forKey: .result)
        try c.encode(result.exitCode, forKey: .exitCode)
        try c.encode(result.signal, forKey: .signal)
        try c.encode(result.reason, forKey: .reason)
        try c.encodeIfPresent(result.failedDependency, forKey: .failedDependency)
        try c.encodeIfPresent(slurmJobId, forKey: .slurmJobId)
    }
}
