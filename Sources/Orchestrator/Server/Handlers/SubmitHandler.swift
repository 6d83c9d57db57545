import OrchestratorAPI

/// `io.orchd.Jobs.Submit`: stores one job, recording the caller's uid as its submitter.
struct SubmitHandler: VarlinkMethodHandler {
    static let method = JobsInterface.submit
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        let parameters: JobsInterface.SubmitParameters
        do {
            parameters = try SubmitDecoder.submitParameters(of: call)
        } catch {
            responder.fail(error)
            return
        }
        let uid = call.peer.uid
        let isAdmin = call.caller.isAdmin
        responder.complete(on: scheduler) { scheduler, reply in
            scheduler.submit(
                [parameters.spec], submitterUid: uid, reuseExisting: parameters.reuseExisting ?? false, isAdmin: isAdmin, reply: reply)
        } reply: { JobsInterface.JobReply(job: $0.jobs[0], existing: $0.existing ? true : nil) }
    }
}
