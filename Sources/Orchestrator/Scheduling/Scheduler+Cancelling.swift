import Foundation
import OrchestratorAPI

// MARK: - Cancelling jobs, many of them a turn at a time

extension Scheduler {
    /// Cancels jobs: finishes those not started, tears down the running ones.
    /// - Parameters:
    ///   - ids: the jobs; nothing is cancelled if one is unknown, finished or not permitted.
    ///   - caller: who asks; admins may cancel any job, others only their own.
    ///   - signal: sent first to a running job's processes instead of SIGTERM.
    /// - Returns: the jobs once all of them have finished (and their ends are durable).
    public func cancel(_ ids: [JobID], by caller: Caller, signal: Int32? = nil) async throws(SchedulerError) -> [Job] {
        // Ownership first: another user's job is refused without saying what state it is in.
        var jobs: [Job] = []
        for id in ids {
            do throws(SchedulerError) {
                jobs.append(try jobForChange(id, by: caller))
            } catch {
                // Ended, with an end the store still refuses: the others are cancelled, and
                // the answer names it (``WaitRequest/kept``). Still the caller's to name.
                guard error.isStoreRefusal, pendingEnds[id] != nil else { throw error }
                try authorize(caller, toManage: try existingJob(id))
            }
        }
        for job in jobs {
            if case .refused(let refusal) = try decide(.cancel, for: job) {
                throw error(for: refusal, job: job.id, state: job.state, operation: .cancel)
            }
        }
        let outcome = try await cancelInTurns(ids, by: caller, onlyIn: nil, of: nil, signal: signal)
        return try await finish(of: ids, read: outcome.finished, failingOnKeptEnd: true)
    }

    /// Cancels every job that has not finished and matches the filters (`cancel --queue Q
    /// --state S`), each as ``cancel(_:by:signal:)`` cancels it; a job the caller may not
    /// change, or that finished, or left the state or the queue meanwhile, is left out.
    /// - Parameters:
    ///   - queue: only this queue's jobs; `nil` for any.
    ///   - stateName: `waiting`, `queued` or `running`; `nil` for any of them.
    ///   - caller: who asks; only jobs they manage (``authorize(_:toManage:)``).
    ///   - signal: as for ``cancel(_:by:signal:)``.
    /// - Returns: the cancelled jobs, by ID, once all have finished.
    /// - Throws: `unknownQueue` for a queue orchd does not know; a storage failure.
    public func cancelMatching(
        queue: QueueName?, stateName: String?, by caller: Caller, signal: Int32? = nil
    ) async throws(SchedulerError) -> [Job] {
        try requireKnownQueue(queue)
        let ids = try storeCall { try store.unfinishedJobIDs(queue: queue, stateName: stateName) }
        let outcome = try await cancelInTurns(ids, by: caller, onlyIn: stateName, of: queue, signal: signal)
        return try await finish(of: outcome.cancelled, read: outcome.finished, failingOnKeptEnd: true)
    }

    /// Cancels `ids` in order, ``jobsPerTurn`` of them a turn: in each, the running ones'
    /// teardowns begin and the ends of those not started are written in one transaction,
    /// then counted and announced. A job that finished, is gone, is not the caller's, or is
    /// no longer in `stateName` or of `queue` by its turn is left out.
    ///
    /// While a cancel takes more than one turn no queue starts a job, so none of those it is
    /// about to dequeue starts in between; the queues are fed once it is done (or has
    /// failed). Once orchd is stopping, the rest is done without pause, so the cancel
    /// answers before the daemon exits.
    ///
    /// A waiting job whose dependency this cancel ended earlier in the same turn ends
    /// `dependency_failed`, as ending that dependency fails it when its turn came first.
    /// - Returns: the jobs it cancelled (their teardown begun, or their end written), and
    ///   those it finished, as now stored.
    /// - Throws: a storage failure; the turns before stay written.
    private func cancelInTurns(
        _ ids: [JobID], by caller: Caller, onlyIn stateName: String?, of queue: QueueName?, signal: Int32?
    ) async throws(SchedulerError) -> (cancelled: [JobID], finished: [JobID: Job]) {
        let inTurns = ids.count > Self.jobsPerTurn
        if inTurns { startsHeldByCancels += 1 }
        defer {
            if inTurns {
                startsHeldByCancels -= 1
                if startsHeldByCancels == 0 {
                    for runner in runners.values.sorted(by: { $0.name.rawValue < $1.name.rawValue }) { feed(runner) }
                }
            }
        }
        var cancelled: [JobID] = []
        var finished: [JobID: Job] = [:]
        var seen: Set<JobID> = []
        var next = ids.startIndex
        while next < ids.endIndex {
            let end = min(next + Self.jobsPerTurn, ids.endIndex)
            let turn = ids[next..<end].filter { seen.insert($0).inserted }
            next = end
            var ends: [(job: Job, result: JobResult)] = []
            var endedThisTurn: Set<JobID> = []
            // As ``jobForChange(_:by:)`` does for one job: ends not written yet first, then the
            // turn's jobs in one read, without their environments (a cancel does not use them).
            // A job whose end the store still refuses has ended: nothing to tear down, and the
            // others are cancelled all the same (the answer names it, ``WaitRequest/kept``).
            var kept: Set<JobID> = []
            for id in turn {
                do throws(SchedulerError) {
                    try settlePendingEnd(of: id)
                } catch {
                    guard error.isStoreRefusal, pendingEnds[id] != nil else { throw error }
                    kept.insert(id)
                }
            }
            let read = try storeCall { try store.jobs(ids: turn) }
            let jobs = Dictionary(read.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for id in turn where !kept.contains(id) {
                // Pruned meanwhile, or not theirs: left out.
                guard let job = jobs[id], caller.mayManage(owner: job.submitterUid) else { continue }
                // Moved to another queue (`edit --queue`), or out of the state, between turns.
                if let stateName, job.state.name != stateName { continue }
                if let queue, job.spec.queue != queue { continue }
                switch try decide(.cancel, for: job) {
                case .stop(let reason):
                    if let operation = operations[id] {
                        stop(operation, of: id, reason: reason, signal: signal)
                    } else {
                        // Recorded running with no process of this daemon (never spawned):
                        // nothing to tear down; it ends with the others of the turn.
                        ends.append((job, reason.jobResult))
                        endedThisTurn.insert(id)
                    }
                    cancelled.append(id)
                case .enter(.finished(let result)):
                    if job.state == .waiting, let dependency = job.after.filter(endedThisTurn.contains).min(),
                        case .enter(.finished(let failed)) = try decide(.failDependency(dependency), for: job)
                    {
                        ends.append((job, failed))
                    } else {
                        ends.append((job, result))
                        cancelled.append(id)
                    }
                    endedThisTurn.insert(id)
                default:
                    continue  // finished meanwhile (a dependency of it was cancelled first)
                }
            }
            do {
                for job in try recordEnds(ends) { finished[job.id] = job }
            } catch where error.isStoreRefusal {
                // Jobs already cancelled (a running one's teardown begun, earlier turns
                // committed): the refusal must not read as "nothing was done" to a client that
                // would then cancel again as if it were.
                let unwritten = Set(ends.map(\.job.id))
                let done = cancelled.filter { !unwritten.contains($0) }
                guard !done.isEmpty else { throw error }
                throw .partlyCancelled(done, cause: error)
            }
            if next < ids.endIndex && !isStopping { await Task.yield() }
        }
        return (cancelled, finished)
    }

    /// Begins a running job's teardown for a cancel, its ending stored first, final: a result
    /// the main process had already ended with is kept, and not retried.
    private func stop(_ operation: any ExecutorAttempt, of id: JobID, reason: StopReason, signal: Int32?) {
        // A main process that ended on its own keeps its result, but is not retried.
        retriesCancelled.insert(id)
        noteEnding(id, reason.jobResult, final: true)
        operation.stop(reason: reason, signal: signal)
    }

    /// Writes the ends of a turn's jobs (not started, or never spawned) in one transaction, then does for each
    /// what ``record(_:finishedAs:at:)`` does after its write: counts, waiters, dependents,
    /// retention. That follow-up runs for every end written, even when one of them throws.
    /// - Returns: the jobs as now stored.
    /// - Throws: a storage failure of the write (then none was written), or the first error
    ///   of the follow-up.
    private func recordEnds(_ ends: [(job: Job, result: JobResult)]) throws(SchedulerError) -> [Job] {
        guard !ends.isEmpty else { return [] }
        let stored = try storeCall { try store.markFinished(ends.map { ($0.job.id, $0.result) }, at: Date()) }
        var firstError: SchedulerError?
        for (end, job) in zip(ends, stored) {
            do throws(SchedulerError) {
                try self.finished(end.job, as: job)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return stored
    }
}
