import OrchestratorAPI

/// `io.orchd.Queues.Add`: declares a new queue with its settings (as Set checks them).
struct AddQueueHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.add
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        SetQueueHandler.apply(call, responder: responder, scheduler: scheduler, declaring: true)
    }
}
