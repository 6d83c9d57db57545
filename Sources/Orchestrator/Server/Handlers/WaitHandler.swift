import OrchestratorAPI

/// `io.orchd.Jobs.Wait`: replies once every listed job has finished. Event-driven: the
/// scheduler answers when it records the last end, no polling. Called with `more`, the jobs
/// come in pages (``JobPageStream``), so no reply outgrows the message cap however many jobs
/// were waited for.
struct WaitHandler: VarlinkMethodHandler {
    static let method = JobsInterface.wait
    /// Waits, or follows, for as long as the client likes.
    static let mayWaitIndefinitely = true
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.IDsParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            let caller = call.caller
            responder.completeWithJobs { [scheduler] () async throws(SchedulerError) in
                try await scheduler.wait(for: parameters.ids, by: caller)
            }
        } catch {
            responder.fail(error)
        }
    }
}
