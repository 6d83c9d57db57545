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
