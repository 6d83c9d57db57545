import OrchestratorAPI

/// `io.orchd.Jobs.List`: jobs filtered by IDs, queue and state, optionally only the newest
/// `limit`. Called with `more`, the jobs come in replies of at most ``pageSize``, so no reply
/// outgrows the message cap however many jobs match.
struct ListHandler: VarlinkMethodHandler {
    static let method = "io.orchd.Jobs.List"
    static let pageSize = 1000
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.ListParameters.self)
            if let state = parameters.state, !JobState.names.contains(state) {
                throw VarlinkError.invalidParameter("state")
            }
            if let limit = parameters.limit, limit < 0 { throw VarlinkError.invalidParameter("limit") }
            scheduler.list(ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit) { result in
                guard case .success(let jobs) = result, call.more else {
                    responder.complete(result) { JobsInterface.JobsReply(jobs: $0) }
                    return
                }
                var start = 0
                repeat {
                    let end = min(start + Self.pageSize, jobs.count)
                    responder.reply(JobsInterface.JobsReply(jobs: Array(jobs[start..<end])), continues: end < jobs.count)
                    start = end
                } while start < jobs.count
            }
        } catch {
            responder.fail(error)
        }
    }
}
