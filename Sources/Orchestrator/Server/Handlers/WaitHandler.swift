import OrchestratorAPI

/// `io.orchd.Jobs.Wait`: replies once every listed job has finished. Event-driven: the
/// scheduler answers when it records the last end, no polling.
struct WaitHandler: VarlinkMethodHandler {
    static let method = "io.orchd.Jobs.Wait"
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.IDsParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            scheduler.wait(for: parameters.ids) { result in
                responder.complete(result) { JobsInterface.JobsReply(jobs: $0) }
            }
        } catch {
            responder.fail(error)
        }
    }
}
