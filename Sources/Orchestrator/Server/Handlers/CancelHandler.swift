import OrchestratorAPI

/// `io.orchd.Jobs.Cancel`: dequeues or tears down jobs; replies once all have finished, in
/// pages when called with `more`.
struct CancelHandler: VarlinkMethodHandler {
    static let method = JobsInterface.cancel
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.CancelParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            let signal = try Self.signal(parameters.signal)
            let caller = call.caller
            responder.completeWithJobs { [scheduler] () async throws(SchedulerError) in
                try await scheduler.cancel(parameters.ids, by: caller, signal: signal)
            }
        } catch {
            responder.fail(error)
        }
    }

    /// The signal a `signal` parameter names.
    /// - Throws: `InvalidParameter(signal)` for a name that is not one of
    ///   ``JobsInterface/cancelSignals``.
    static func signal(_ name: String?) throws(VarlinkError) -> Int32? {
        guard let name else { return nil }
        guard let signal = JobsInterface.cancelSignal(named: name) else { throw .invalidParameter("signal") }
        return signal
    }
}
