import OrchestratorAPI

/// `io.orchd.Jobs.Cancel`: dequeues or tears down jobs; replies once all have finished.
struct CancelHandler: VarlinkMethodHandler {
    static let method = JobsInterface.cancel
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.IDsParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            let uid = call.peer.uid
            responder.complete({ [scheduler] () async throws(SchedulerError) in try await scheduler.cancel(parameters.ids, by: uid) }) {
                JobsInterface.JobsReply(jobs: $0)
            }
        } catch {
            responder.fail(error)
        }
    }
}
