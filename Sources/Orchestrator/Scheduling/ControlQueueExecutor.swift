import Dispatch

/// The serial executor of ``Scheduler``: runs the actor's jobs on one serial DispatchQueue,
/// the control queue, in the order they were enqueued.
///
/// A queue rather than the default actor executor, because the scheduler's dispatch sources
/// (timers) and its operations' callbacks fire on a queue: on this one they already run
/// isolated to the actor, and enter it with `assumeIsolated`, which ``checkIsolated()``
/// lets the runtime verify (the pattern of GRDB's `DispatchQueueActor`).
final class ControlQueueExecutor: SerialExecutor {
    /// The control queue.
    let queue: DispatchQueue

    /// Creates the executor and its queue.
    /// - Parameter label: the queue's label, shown by debuggers.
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless called on the control queue: what `assumeIsolated` relies on.
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
