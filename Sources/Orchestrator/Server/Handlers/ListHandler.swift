import OrchestratorAPI

/// `io.orchd.Jobs.List`: jobs filtered by IDs, queue and state.
struct ListHandler: VarlinkMethodHandler {
    static let method = "io.orchd.Jobs.List"
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.ListParameters.self)
            if let state = parameters.state, !JobState.names.contains(state) {
                throw VarlinkError.invalidParameter("state")
            }
            scheduler.list(ids: parameters.ids, queue: parameters.queue, stateName: parameters.state) { result in
                responder.complete(result) { JobsInterface.JobsReply(jobs: $0) }
            }
        } catch {
            responder.fail(error)
        }
    }
}
