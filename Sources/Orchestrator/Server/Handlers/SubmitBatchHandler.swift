import OrchestratorAPI

/// `io.orchd.Jobs.SubmitBatch`: stores many jobs in one transaction, all or none.
struct SubmitBatchHandler: VarlinkMethodHandler {
    static let method = JobsInterface.submitBatch
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try SubmitDecoder.batchParameters(of: call)
            guard !parameters.specs.isEmpty else { throw VarlinkError.invalidParameter("specs") }
            let returnJobs = parameters.returnJobs ?? false
            let specs = parameters.resolvedSpecs
            let uid = call.peer.uid
            let isAdmin = call.caller.isAdmin
            responder.complete(on: scheduler) { scheduler, reply in
                scheduler.submit(specs, submitterUid: uid, isAdmin: isAdmin, reply: reply)
            } reply: { JobsInterface.SubmitBatchReply(ids: $0.jobs.map(\.id), jobs: returnJobs ? $0.jobs : nil) }
        } catch {
            responder.fail(error)
        }
    }
}
