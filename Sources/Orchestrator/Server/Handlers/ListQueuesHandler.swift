import OrchestratorAPI

/// `io.orchd.Queues.List`: every queue with its settings and counts.
struct ListQueuesHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.list
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        scheduler.queues { responder.reply(QueuesInterface.QueuesReply(queues: $0)) }
    }
}
