import OrchestratorAPI
import Synchronization

/// `io.orchd.Jobs.List`: jobs filtered by IDs, queue, state, result and labels, optionally only the newest
/// `limit`. Called with `more`, the jobs come in pages (``JobPageStream``), each read from the
/// store only when the client has room for it, so no reply outgrows the message cap and no
/// listing sits in memory whole, however many jobs match.
///
/// Who asks decides what is listed: admins get every job; other users their own, or with
/// `allUsers` everyone's, other users' jobs ``Job/redactedForOthers``.
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
            if let result = parameters.result, !JobResult.names.contains(result) {
                throw VarlinkError.invalidParameter("result")
            }
            let caller = call.caller
            // Other users' labels are not shown to a non-admin, so they cannot be filtered on either.
            if !caller.isAdmin, parameters.allUsers == true, !(parameters.labels ?? [:]).isEmpty {
                throw VarlinkError.permissionDenied(
                    "only admins may filter every user's jobs by label (other users' labels are not shown); "
                        + "without --all-users, --label filters your own jobs")
            }
            let owner: UInt32? = caller.isAdmin || parameters.allUsers == true ? nil : caller.uid
            let shown: @Sendable ([Job]) -> [Job] = { jobs in
                caller.isAdmin ? jobs : jobs.map { caller.mayManage(owner: $0.submitterUid) ? $0 : $0.redactedForOthers }
            }
            guard call.more else {
                responder.complete({ [scheduler] () async throws(SchedulerError) in
                    try await scheduler.list(
                        ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit,
                        owner: owner, result: parameters.result, labels: parameters.labels)
                }) { JobsInterface.JobsReply(jobs: shown($0)) }
                return
            }
            let scheduler = self.scheduler
            Task {
                let listing: JobStore.JobListing
                do throws(SchedulerError) {
                    listing = try await scheduler.beginListing(
                        ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit,
                        owner: owner, result: parameters.result, labels: parameters.labels)
                } catch {
                    responder.fail(error.varlinkError)
                    return
                }
                let position = Position()
                JobPageStream.stream(to: responder) { count, completion in
                    Task {
                        do throws(SchedulerError) {
                            let jobs = try await scheduler.listPage(of: listing, after: position.last.withLock { $0 }, count: count)
                            if let id = jobs.last?.id { position.last.withLock { $0 = id } }
                            completion(.success(shown(jobs)))
                        } catch {
                            completion(.failure(error.varlinkError))
                        }
                    }
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
