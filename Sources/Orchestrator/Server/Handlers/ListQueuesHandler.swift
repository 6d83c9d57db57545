import OrchestratorAPI

/// `io.orchd.Queues.List`: every queue with its settings and counts.
struct ListQueuesHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.list
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        Task { [scheduler] in responder.reply(QueuesInterface.QueuesReply(queues: await scheduler.queues)) }
    }
}
