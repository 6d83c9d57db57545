import OrchestratorAPI

/// `io.orchd.Jobs.Suspend`: stops a running job's processes (cgroup freezer, or SIGSTOP).
struct SuspendHandler: VarlinkMethodHandler {
    static let method = JobsInterface.suspend
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.GetParameters.self)
            let caller = call.caller
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.setSuspended(parameters.id, true, by: caller)
            }) { JobsInterface.JobReply(job: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
