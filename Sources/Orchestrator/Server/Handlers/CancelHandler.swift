import OrchestratorAPI

/// `io.orchd.Jobs.Cancel`: dequeues or tears down jobs; replies once all have finished.
struct CancelHandler: VarlinkMethodHandler {
    static let method = JobsInterface.cancel
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.IDsParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            let caller = call.caller
            responder.complete({ [scheduler] () async throws(SchedulerError) in try await scheduler.cancel(parameters.ids, by: caller) }) {
                JobsInterface.JobsReply(jobs: $0)
            }
        } catch {
            responder.fail(error)
        }
    }
}
