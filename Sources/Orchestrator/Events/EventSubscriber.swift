import OrchestratorAPI

/// A live reader of the event log (`orchctl events --follow`): its filters and how to hand it
/// an event. Owned by the scheduler's control queue.
final class EventSubscriber {
    let queue: QueueName?
    let jobID: JobID?
    /// Sends one event; returns `false` once the reader is gone, so it can be dropped.
    let deliver: (Event) -> Bool

    init(queue: QueueName?, jobID: JobID?, deliver: @escaping (Event) -> Bool) {
        self.queue = queue
        self.jobID = jobID
        self.deliver = deliver
    }

    /// Whether the event passes this reader's filters.
    func wants(_ event: Event) -> Bool {
        (queue == nil || event.queue == queue) && (jobID == nil || event.jobId == jobID)
    }
}
