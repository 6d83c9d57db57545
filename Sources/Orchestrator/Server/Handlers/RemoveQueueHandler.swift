import OrchestratorAPI

/// `io.orchd.Queues.Remove`: removes a declared queue that has no unfinished job.
struct RemoveQueueHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.remove
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(QueuesInterface.RemoveParameters.self)
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.removeQueue(parameters.name)
            }) { QueuesInterface.RemoveReply() }
        } catch {
            responder.fail(error)
        }
    }
}
