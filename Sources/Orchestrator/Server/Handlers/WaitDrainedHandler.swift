import OrchestratorAPI

/// `io.orchd.Queues.WaitDrained`: replies once a queue has no live job; event-driven.
struct WaitDrainedHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.waitDrained
    /// Waits, or follows, for as long as the client likes.
    static let mayWaitIndefinitely = true
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(QueuesInterface.WaitDrainedParameters.self)
            let perUser = call.caller.isAdmin
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.waitUntilDrained(parameters.name, perUser: perUser)
            }) {
                QueuesInterface.QueueReply(queue: $0)
            }
        } catch {
            responder.fail(error)
        }
    }
}
