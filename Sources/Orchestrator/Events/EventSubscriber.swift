import OrchestratorAPI

/// A live reader of the event log (`orchctl events --follow`): its filters and how to hand it
/// an event. Owned by the scheduler's control queue.
final class EventSubscriber {
    let queue: QueueName?
    let jobID: JobID?
    /// Who reads: a caller who is no admin gets only their own jobs' events.
    let caller: Caller
    /// Sends one event; returns `false` once the reader is gone, so it can be dropped.
    let deliver: (Event) -> Bool

    init(queue: QueueName?, jobID: JobID?, caller: Caller = .root, deliver: @escaping (Event) -> Bool) {
        self.queue = queue
        self.jobID = jobID
        self.caller = caller
        self.deliver = deliver
    }

    /// Whether the event passes this reader's filters.
    func wants(_ event: Event) -> Bool {
        (queue == nil || event.queue == queue) && (jobID == nil || event.jobId == jobID) && Self.shows(event, to: caller)
    }

    /// Whether `caller` may see `event`: events of no job (queues, the daemon) are for
    /// everyone; a job's events are for its owner and admins (an event of a job pruned
    /// before it was read has no known owner, and is for admins only).
    static func shows(_ event: Event, to caller: Caller) -> Bool {
        guard event.jobId != nil else { return true }
        return caller.isAdmin || event.ownerUid.map(caller.mayManage(owner:)) ?? false
    }
}
