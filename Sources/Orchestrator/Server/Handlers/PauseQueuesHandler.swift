import OrchestratorAPI

/// `io.orchd.Queues.Pause`: stops queues from starting new jobs; running jobs go on.
struct PauseQueuesHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.pause
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        Self.setPaused(true, call, responder, scheduler)
    }

    /// Shared with ``ResumeQueuesHandler``: the two methods differ only in `paused`.
    static func setPaused(_ paused: Bool, _ call: VarlinkMethodCall, _ responder: VarlinkResponder, _ scheduler: Scheduler) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(QueuesInterface.NamesParameters.self)
            responder.complete({ () async throws(SchedulerError) in try await scheduler.setPaused(parameters.names, paused: paused) }) {
                QueuesInterface.QueuesReply(queues: $0)
            }
        } catch {
            responder.fail(error)
        }
    }
}
