import OrchestratorAPI

/// `io.orchd.Jobs.Prune`: deletes finished jobs and their logs.
struct PruneHandler: VarlinkMethodHandler {
    static let method = JobsInterface.prune
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.PruneParameters.self)
            if let age = parameters.olderThanUSec, age < 0 { throw VarlinkError.invalidParameter("olderThanUSec") }
            let age = parameters.olderThanUSec.map(Duration.init(microseconds:))
            responder.complete({ [scheduler] () async throws(SchedulerError) in try await scheduler.prune(olderThan: age) }) {
                JobsInterface.PruneReply(pruned: $0)
            }
        } catch {
            responder.fail(error)
        }
    }
}
