import OrchestratorAPI

/// `io.orchd.Jobs.Retry`: runs a finished job again under the same ID.
struct RetryHandler: VarlinkMethodHandler {
    static let method = JobsInterface.retry
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.GetParameters.self)
            let caller = call.caller
            responder.complete({ [scheduler] () async throws(SchedulerError) in try await scheduler.retry(parameters.id, by: caller) }) {
                JobsInterface.JobReply(job: $0)
            }
        } catch {
            responder.fail(error)
        }
    }
}
