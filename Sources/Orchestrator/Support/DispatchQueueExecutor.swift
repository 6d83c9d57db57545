import Dispatch

/// A serial executor that runs an actor's jobs on one serial DispatchQueue, in the order they
/// were enqueued.
///
/// A queue rather than the default actor executor, because the actor's timers, descriptor
/// watches (``EpollLoop``) and callbacks fire on a queue: on this one they already run
/// isolated to the actor, and enter it with `assumeIsolated`, which ``checkIsolated()``
/// lets the runtime verify (the pattern of GRDB's `DispatchQueueActor`). ``Scheduler`` runs
/// on the control queue this way; smaller actors on their own queues.
final class DispatchQueueExecutor: SerialExecutor {
    /// The queue the actor runs on.
    let queue: DispatchQueue

    /// Creates the executor and its queue.
    /// - Parameter label: the queue's label, shown by debuggers.
    convenience init(label: String) {
        self.init(queue: DispatchQueue(label: label))
    }

    /// Creates the executor over an existing serial queue.
    /// - Parameter queue: a serial queue; whatever else runs on it runs isolated to the actor.
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless called on the queue: what `assumeIsolated` relies on.
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}

/// A task executor over a serial queue: a task that prefers it (`Task(executorPreference:)`)
/// runs its code outside any actor on that queue. Given the queue of an actor's
/// ``DispatchQueueExecutor``, a request's task then reaches the actor, and comes back from
/// it, by a turn of the same queue instead of two thread hops through the global pool.
/// Its own object, not the actor's executor in a second role: that lost replies
/// (docs/ARCHITECTURE.md, Concurrency).
final class QueueTaskExecutor: TaskExecutor {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
