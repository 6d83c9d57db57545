import OrchestratorAPI

/// `io.orchd.Jobs.Continue`: lets a suspended job's processes go on.
struct ContinueHandler: VarlinkMethodHandler {
    static let method = JobsInterface.resume
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.GetParameters.self)
            let caller = call.caller
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.setSuspended(parameters.id, false, by: caller)
            }) { JobsInterface.JobReply(job: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
