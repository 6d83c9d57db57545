import OrchestratorAPI

/// `io.orchd.Queues.Set`: changes a queue's concurrency or retry backoff at run time.
struct SetQueueHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.set
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(QueuesInterface.SetParameters.self)
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.setQueue(
                    parameters.name, concurrency: parameters.concurrency,
                    retryBase: parameters.retryBaseUSec.map { .microseconds($0) },
                    retryCap: parameters.retryCapUSec.map { .microseconds($0) }, hooks: parameters.hooks)
            }) { QueuesInterface.QueueReply(queue: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
