import OrchestratorAPI

/// A caller waiting for a set of jobs to finish (`orchctl wait`, `submit --wait`, `cancel`).
/// Owned by the scheduler's control queue.
final class WaitRequest {
    /// The jobs asked for, in the caller's order.
    let ids: [JobID]
    /// The jobs not finished yet.
    var remaining: Set<JobID> = []
    /// Each job as it finished: the answer holds it even when a retention limit prunes the
    /// job before the answer is sent.
    var finished: [JobID: Job] = [:]
    let completion: @Sendable (Result<[Job], SchedulerError>) -> Void
    /// A cancel's: answered with the store's refusal as soon as one of its jobs ended with
    /// an end the store refused, instead of waiting until the store takes it (a full disk
    /// may stay full for hours; the processes are gone).
    var failsOnKeptEnd = false
    /// For a cancel's wait: its jobs that ended with an end the store refused, and how they
    /// ended; answered with ``SchedulerError/endKept(_:cause:)`` once no other job remains.
    var kept: [JobID: JobResult] = [:]
    /// Why the store refused the first of them.
    var keptCause: SchedulerError?

    init(ids: [JobID], completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void) {
        self.ids = ids
        self.completion = completion
    }
}
