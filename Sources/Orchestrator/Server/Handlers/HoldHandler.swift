import OrchestratorAPI

/// `io.orchd.Jobs.Hold`: keeps jobs that have not started from starting.
struct HoldHandler: VarlinkMethodHandler {
    static let method = JobsInterface.hold
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.IDsParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            let caller = call.caller
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.setHeld(parameters.ids, true, by: caller)
            }) { JobsInterface.JobsReply(jobs: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
