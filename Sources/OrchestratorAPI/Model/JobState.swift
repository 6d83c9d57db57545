/// Where a job is in its life. The result lives inside ``finished(_:)``, so a job has a
/// result exactly when it is finished: the type enforces it.
public enum JobState: Hashable, Sendable {
    /// Not yet eligible to run: dependencies unfinished or its start time in the future.
    case waiting
    /// Eligible, waiting for a free slot in its queue (or for a paused queue to resume).
    case queued
    /// Its process is running.
    case running
    /// Done, with how it ended.
    case finished(JobResult)

    /// The state's name without the result: `waiting`, `queued`, `running` or `finished`.
    public var name: String {
        switch self {
        case .waiting: "waiting"
        case .queued: "queued"
        case .running: "running"
        case .finished: "finished"
        }
    }

    /// The result, when finished.
    public var result: JobResult? {
        if case .finished(let result) = self { return result }
        return nil
    }

    /// Whether the job has finished.
    public var isFinished: Bool { result != nil }

    /// The state names a filter (`orchctl status --state S`) may use.
    public static let names = ["waiting", "queued", "running", "finished"]
}

extension JobState {
    /// The state called `name` (``name``); a finished one with the result `finishedResult`
    /// reads, which is called only for `finished`.
    /// - Returns: `nil` when `name` names no state.
    /// - Throws: what `finishedResult` throws (its source's error for a missing or unknown result).
    public init?<Failure: Error>(name: String, finishedResult: () throws(Failure) -> JobResult) throws(Failure) {
        switch name {
        case "waiting": self = .waiting
        case "queued": self = .queued
        case "running": self = .running
        case "finished": self = .finished(try finishedResult())
        default: return nil
        }
    }

    /// A job's state as its JSON object carries it: `state`, and for a finished job `result`
    /// with `exitCode`, `signal`, `reason` and `failedDependency` (each optional).
    /// - Parameters:
    ///   - c: the job object's container; the keys name its members.
    /// - Throws: `DecodingError` for a missing or unknown state or result.
    static func decode<K: CodingKey>(
        from c: KeyedDecodingContainer<K>, state: K, result: K, exitCode: K, signal: K, reason: K, failedDependency: K
    ) throws -> JobState {
        let stateName = try c.decode(String.self, forKey: state)
        let decoded = try JobState(name: stateName) {
            let resultName = try c.decode(String.self, forKey: result)
            guard let ended = JobResult(
                name: resultName,
                exitCode: try c.decodeIfPresent(Int32.self, forKey: exitCode),
                signal: try c.decodeIfPresent(Int32.self, forKey: signal),
                reason: try c.decodeIfPresent(String.self, forKey: reason),
                failedDependency: try c.decodeIfPresent(JobID.self, forKey: failedDependency))
            else {
                throw DecodingError.dataCorruptedError(forKey: result, in: c, debugDescription: "unknown result '\(resultName)'")
            }
            return ended
        }
        guard let decoded else {
            throw DecodingError.dataCorruptedError(forKey: state, in: c, debugDescription: "unknown state '\(stateName)'")
        }
        return decoded
    }
}
