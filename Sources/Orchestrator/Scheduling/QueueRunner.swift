import Foundation
import OrchestratorAPI

/// One orchd queue: its `OperationQueue`, its settings, its counts, and the jobs handed to it.
///
/// The scheduler feeds it from the store a window at a time, never more jobs than it has free
/// slots, so queued jobs stay rows in SQLite and priority order is decided at each start.
/// Confined to the control queue; the OperationQueue runs the operations on its own threads.
final class QueueRunner {
    let name: QueueName
    let operationQueue: OperationQueue
    /// The stored settings (`nil` fields: the daemon's defaults).
    var settings: QueueSettings
    /// How many of the queue's jobs are in each state.
    var counts = JobCounts()
    /// Jobs whose operation was created and has not reported its end.
    var inFlight: Set<JobID> = []
    /// The queue is declared (it has a row of settings). A runner that is not only counts the
    /// finished jobs of a removed queue: jobs cannot be submitted to it.
    var isDeclared = true

    /// How many jobs may run at once. Changing it takes effect at once; running jobs go on.
    var concurrency: Int {
        didSet { operationQueue.maxConcurrentOperationCount = concurrency }
    }

    /// Creates a runner.
    /// - Parameters:
    ///   - settings: the queue's stored settings.
    ///   - defaultConcurrency: used when the settings name none (at least 1).
    init(settings: QueueSettings, defaultConcurrency: Int) {
        self.name = settings.name
        self.settings = settings
        self.concurrency = settings.concurrency ?? defaultConcurrency
        operationQueue = OperationQueue()
        operationQueue.name = "orchd.queue.\(settings.name)"
        operationQueue.maxConcurrentOperationCount = concurrency
    }

    /// Slots not taken by a job in flight; none while paused.
    var freeSlots: Int { settings.paused ? 0 : max(0, concurrency - inFlight.count) }

    /// The retry backoff of this queue.
    func retryPolicy(default standard: RetryPolicy) -> RetryPolicy {
        RetryPolicy(
            base: settings.retryBaseUSec.map(Duration.init(microseconds:)) ?? standard.base,
            cap: settings.retryCapUSec.map(Duration.init(microseconds:)) ?? standard.cap)
    }

    /// The queue as `orchctl queues` shows it.
    func info(default standard: RetryPolicy) -> QueueInfo {
        let policy = retryPolicy(default: standard)
        return QueueInfo(
            name: name, concurrency: concurrency, paused: settings.paused,
            retryBaseUSec: policy.base.microseconds, retryCapUSec: policy.cap.microseconds, jobs: counts,
            hooks: settings.hooks)
    }
}
