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
    /// Every read of the job table this handler makes goes through these turns, so that
    /// listings cannot crowd the control queue.
    let turns = ReadTurns()

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
            let scheduler = self.scheduler
            let turns = self.turns
            let user = caller.uid
            guard call.more else {
                let fewRows = { (count: Int?) in count.map { $0 <= Self.rowsPerTurn } ?? false }
                guard fewRows(parameters.limit) || fewRows(parameters.ids?.count) else {
                    Task {
                        do throws(SchedulerError) {
                            let listing = try await turns.run(as: user) { () async throws(SchedulerError) in
                                try await scheduler.beginListing(
                                    ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit,
                                    owner: owner, result: parameters.result, labels: parameters.labels)
                            }
                            guard let jobs = try await Self.collect(listing, from: scheduler, turns: turns, as: user, while: responder.isConnected) else {
                                return responder.fail(Self.clientGone)
                            }
                            responder.reply(JobsInterface.JobsReply(jobs: shown(jobs)))
                        } catch {
                            responder.fail(error.varlinkError)
                        }
                    }
                    return
                }
                Task {
                    do throws(SchedulerError) {
                        let jobs = try await turns.run(as: user) { () async throws(SchedulerError) in
                            try await scheduler.list(
                                ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit,
                                owner: owner, result: parameters.result, labels: parameters.labels, while: responder.isConnected)
                        }
                        guard let jobs else { return responder.fail(Self.clientGone) }
                        responder.reply(JobsInterface.JobsReply(jobs: shown(jobs)))
                    } catch {
                        responder.fail(error.varlinkError)
                    }
                }
                return
            }
            Task {
                let listing: JobStore.JobListing
                do throws(SchedulerError) {
                    listing = try await turns.run(as: user) { () async throws(SchedulerError) in
                        try await scheduler.beginListing(
                            ids: parameters.ids, queue: parameters.queue, stateName: parameters.state, limit: parameters.limit,
                            owner: owner, result: parameters.result, labels: parameters.labels)
                    }
                } catch {
                    responder.fail(error.varlinkError)
                    return
                }
                let position = Position()
                JobPageStream.stream(to: responder) { count, completion in
                    Task {
                        do throws(SchedulerError) {
                            let after = position.last.withLock { $0 }
                            let jobs = try await turns.run(as: user) { () async throws(SchedulerError) in
                                try await scheduler.listPage(of: listing, after: after, count: count)
                            }
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

    /// The most jobs a `List` without `more` reads in one turn of the control queue. A call
    /// that may list more (no `limit`, or a larger one, and no short list of IDs) is read a page
    /// per turn, so that other work, the watchdog's probe included, runs between its pages; a
    /// client that sends many such calls cannot hold the scheduler for their total.
    static let rowsPerTurn = 1000

    /// The error a call gets when its client hung up before its answer was read: nobody reads
    /// it, but every call ends with one final reply.
    static let clientGone = VarlinkError(ManagerInterface.Errors.internalError, ["message": .string("the client closed its connection")])

    /// Every job of `listing`, read ``rowsPerTurn`` per turn of the control queue, each page
    /// in `user`'s turn among `turns`; `nil` once `isWanted` says the client has gone (nothing
    /// more is read).
    static func collect(
        _ listing: JobStore.JobListing, from scheduler: Scheduler, turns: ReadTurns, as user: UInt32, while isWanted: @Sendable () -> Bool
    ) async throws(SchedulerError) -> [Job]? {
        var jobs: [Job] = []
        while true {
            let after = jobs.last?.id
            // Asked again once the turn came: the client may have left while the page waited.
            let page = try await turns.run(as: user) { () async throws(SchedulerError) -> [Job]? in
                guard isWanted() else { return nil }
                return try await scheduler.listPage(of: listing, after: after, count: rowsPerTurn)
            }
            guard let page else { return nil }
            jobs += page
            if page.count < rowsPerTurn { return jobs }
        }
    }

    /// The last ID a listing sent. Pages never overlap; the lock publishes it between the
    /// queues they run on.
    private final class Position: Sendable {
        let last = Mutex<JobID?>(nil)
    }
}
