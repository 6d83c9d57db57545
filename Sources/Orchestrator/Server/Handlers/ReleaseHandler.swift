import OrchestratorAPI

/// `io.orchd.Jobs.Release`: lets held jobs start again.
struct ReleaseHandler: VarlinkMethodHandler {
    static let method = JobsInterface.release
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.IDsParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            let caller = call.caller
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.setHeld(parameters.ids, false, by: caller)
            }) { JobsInterface.JobsReply(jobs: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
