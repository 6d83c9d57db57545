import Foundation
import OrchestratorAPI

/// One orchd queue: its `OperationQueue`, its concurrency, and the jobs handed to it.
///
/// The scheduler feeds it from the store a window at a time, never more jobs than it has free
/// slots, so queued jobs stay rows in SQLite and priority order is decided at each start.
/// Confined to the control queue; the OperationQueue runs the operations on its own threads.
final class QueueRunner {
    let name: QueueName
    let operationQueue: OperationQueue
    /// Jobs whose operation was created and has not reported its end.
    var inFlight: Set<JobID> = []

    /// How many jobs may run at once. Changing it takes effect at once; running jobs go on.
    var concurrency: Int {
        didSet { operationQueue.maxConcurrentOperationCount = concurrency }
    }

    /// Creates a runner.
    /// - Parameters:
    ///   - name: the queue's name.
    ///   - concurrency: jobs running at once (at least 1).
    init(name: QueueName, concurrency: Int) {
        self.name = name
        self.concurrency = concurrency
        operationQueue = OperationQueue()
        operationQueue.name = "orchd.queue.\(name)"
        operationQueue.maxConcurrentOperationCount = concurrency
    }

    /// Slots not taken by a job in flight.
    var freeSlots: Int { max(0, concurrency - inFlight.count) }
}
