import OrchestratorAPI

/// `io.orchd.Jobs.CancelMatching`: cancels every unfinished job of a queue and/or state;
/// replies with them once all have finished, in pages when called with `more`.
struct CancelMatchingHandler: VarlinkMethodHandler {
    static let method = JobsInterface.cancelMatching
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.CancelMatchingParameters.self)
            // No filter would cancel everything: a request that is too easy to send by mistake.
            guard parameters.queue != nil || parameters.state != nil else { throw VarlinkError.invalidParameter("queue") }
            if let state = parameters.state, !["waiting", "queued", "running"].contains(state) {
                throw VarlinkError.invalidParameter("state")
            }
            let signal = try CancelHandler.signal(parameters.signal)
            let caller = call.caller
            responder.completeWithJobs { [scheduler] () async throws(SchedulerError) in
                try await scheduler.cancelMatching(queue: parameters.queue, stateName: parameters.state, by: caller, signal: signal)
            }
        } catch {
            responder.fail(error)
        }
    }
}
