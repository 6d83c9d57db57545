import OrchestratorAPI

/// `io.orchd.Jobs.Get`: one job by ID, with its finished attempts.
struct GetHandler: VarlinkMethodHandler {
    static let method = JobsInterface.get
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.GetParameters.self)
            responder.complete({ [scheduler] () async throws(SchedulerError) in try await scheduler.job(parameters.id, by: call.caller) }) {
                JobsInterface.JobReply(job: $0.job, attempts: $0.attempts)
            }
        } catch {
            responder.fail(error)
        }
    }
}
