import OrchestratorAPI

/// `io.orchd.Jobs.RetryFailed`: retries every failed job (of a queue), reporting those that
/// cannot be retried.
struct RetryFailedHandler: VarlinkMethodHandler {
    static let method = JobsInterface.retryFailed
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.RetryFailedParameters.self)
            let caller = call.caller
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.retryFailed(queue: parameters.queue, by: caller)
            }) { outcome in
                JobsInterface.RetryFailedReply(
                    jobs: outcome.jobs,
                    refused: outcome.refused.map { JobsInterface.RetryFailedReply.Refusal(id: $0.0, message: $0.1.description) })
            }
        } catch {
            responder.fail(error)
        }
    }
}
