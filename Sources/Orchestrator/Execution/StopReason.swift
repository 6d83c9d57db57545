import OrchestratorAPI

/// Why ``JobOperation/stop(reason:)`` stops a job; it decides the job's result.
public enum StopReason: Hashable, Sendable {
    /// A user cancelled the job: result `.cancelled`.
    case cancelled
    /// The job ran past its timeout: result `.timedOut`.
    case timedOut
    /// The daemon is shutting down: result `.interrupted`.
    case shutdown

    /// The result a job stopped for this reason gets, however its process died.
    public var jobResult: JobResult {
        switch self {
        case .cancelled: .cancelled
        case .timedOut: .timedOut
        case .shutdown: .interrupted
        }
    }
}
