/// How a finished job ended. Kept apart from ``JobState``: a job has a result exactly when its
/// state is ``JobState/finished(_:)``.
///
/// A non-zero exit is a normal result (`.failed(exitCode: 3)`), not an error. On the wire the
/// case is a snake_case string in the job's `result` field, with its payload in `exitCode`,
/// `signal`, `reason` or `failedDependency` (see `io.orchd.Jobs.varlink`).
public enum JobResult: Hashable, Sendable {
    /// The process exited with status 0.
    case succeeded
    /// The process exited with a non-zero status (1...255).
    case failed(exitCode: Int32)
    /// The process was ended by a signal it did not handle (the signal number, e.g. 9).
    case signaled(signal: Int32)
    /// The job ran longer than its timeout and was torn down.
    case timedOut
    /// A user cancelled the job, before it started or while it ran.
    case cancelled
    /// The process could not be started; `reason` says why (e.g. "No such file or directory").
    case spawnFailed(reason: String)
    /// A dependency did not succeed, so this job never started.
    case dependencyFailed(JobID)
    /// The daemon stopped or died while the job ran, and no attempt was left to retry it.
    case interrupted

    /// Every result's name, as ``name`` gives it (for `status --result` and `List`'s filter).
    public static let names = [
        "succeeded", "failed", "signaled", "timed_out", "cancelled", "spawn_failed", "dependency_failed", "interrupted",
    ]

    /// The snake_case name used on the wire and in the store.
    public var name: String {
        switch self {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .signaled: "signaled"
        case .timedOut: "timed_out"
        case .cancelled: "cancelled"
        case .spawnFailed: "spawn_failed"
        case .dependencyFailed: "dependency_failed"
        case .interrupted: "interrupted"
        }
    }

    /// Rebuilds a result from its wire or store name and payload fields.
    /// - Returns: `nil` when `name` is unknown or its payload is missing.
    public init?(name: String, exitCode: Int32?, signal: Int32?, reason: String?, failedDependency: JobID?) {
        switch name {
        case "succeeded": self = .succeeded
        case "failed":
            guard let exitCode else { return nil }
            self = .failed(exitCode: exitCode)
        case "signaled":
            guard let signal else { return nil }
            self = .signaled(signal: signal)
        case "timed_out": self = .timedOut
        case "cancelled": self = .cancelled
        case "spawn_failed": self = .spawnFailed(reason: reason ?? "")
        case "dependency_failed":
            guard let failedDependency else { return nil }
            self = .dependencyFailed(failedDependency)
        case "interrupted": self = .interrupted
        default: return nil
        }
    }

    /// The process's exit status, when it exited.
    public var exitCode: Int32? {
        switch self {
        case .succeeded: 0
        case .failed(let code): code
        default: nil
        }
    }

    /// The signal that ended the process, when one did.
    public var signal: Int32? {
        if case .signaled(let signal) = self { return signal }
        return nil
    }

    /// Why the process could not be started, for ``spawnFailed(reason:)``.
    public var reason: String? {
        if case .spawnFailed(let reason) = self { return reason }
        return nil
    }

    /// The dependency that did not succeed, for ``dependencyFailed(_:)``.
    public var failedDependency: JobID? {
        if case .dependencyFailed(let id) = self { return id }
        return nil
    }

    /// The exit status `orchctl wait` and `submit --wait` report for this result, following
    /// the shell's conventions: the job's own exit code, 128 + signal when signaled, 124 for
    /// a timeout (as timeout(1)), 127 when the command could not be started, 1 otherwise.
    public var shellExitStatus: Int32 {
        switch self {
        case .succeeded: 0
        case .failed(let code): code
        case .signaled(let signal): 128 + signal
        case .timedOut: 124
        case .spawnFailed: 127
        case .cancelled, .dependencyFailed, .interrupted: 1
        }
    }
}
