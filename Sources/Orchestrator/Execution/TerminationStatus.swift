import OrchestratorAPI

/// How a reaped process ended, from waitid(2): a normal exit with a status, or a signal.
///
/// A non-zero exit is a normal outcome, never an error.
public enum TerminationStatus: Hashable, Sendable {
    /// The process called exit(3) with this status (0...255); `CLD_EXITED`.
    case exited(Int32)
    /// The process was killed by this signal (`CLD_KILLED` or `CLD_DUMPED`).
    case signaled(Int32)

    /// The job result this status means: `.exited(0)` is `.succeeded`, `.exited(n)` is
    /// `.failed(exitCode: n)`, `.signaled(s)` is `.signaled(signal: s)`.
    public var jobResult: JobResult {
        switch self {
        case .exited(0): .succeeded
        case .exited(let code): .failed(exitCode: code)
        case .signaled(let signal): .signaled(signal: signal)
        }
    }
}
