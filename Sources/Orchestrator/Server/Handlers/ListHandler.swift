import OrchestratorAPI
import Synchronization

/// `io.orchd.Jobs.List`: jobs filtered by IDs, queue and state, optionally only the newest
/// `limit`. Called with `more`, the jobs come in pages (``JobPageStream``), each read from the
/// store only when the client has room for it, so no reply outgrows the message cap and no
/// listing sits in memory whole, however many jobs match.
struct ListHandler: VarlinkMethodHandler {
    static let method = JobsInterface.list
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.ListParameters.self)
            if let state = parameters.state, !JobState.names.contains(state) {
                throw VarlinkError.invalidParameter("state")
            }
            if let limit = parameters.limit, limit < 0 { throw VarlinkError.invalidParameter("limit") }
            guard call.more else {
                scheduler.list(ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit) { result in
                    responder.complete(result) { JobsInterface.JobsReply(jobs: $0) }
                }
                return
            }
            let scheduler = self.scheduler
            scheduler.beginListing(
                ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit
            ) { result in
                switch result {
                case .success(let listing):
                    let position = Position()
                    JobPageStream.stream(to: responder) { count, completion in
                        scheduler.listPage(of: listing, after: position.last.withLock { $0 }, count: count) { page in
                            if case .success(let jobs) = page, let id = jobs.last?.id { position.last.withLock { $0 = id } }
                            completion(page.mapError(\.varlinkError))
                        }
                    }
                case .failure(let error):
                    responder.fail(error.varlinkError)
                }
            }
        } catch {
            responder.fail(error)
        }
    }

    /// The last ID a listing sent. Pages never overlap; the lock publishes it between the
    /// queues they run on.
    private final class Position: Sendable {
        let last = Mutex<JobID?>(nil)
    }
}
