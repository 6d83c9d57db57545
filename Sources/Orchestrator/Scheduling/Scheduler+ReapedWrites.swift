import Foundation
import OrchestratorAPI

// MARK: - What the operations report in one turn, written in one transaction

extension Scheduler {
    /// A job's end reported by its operation, not yet written.
    struct ReapedEnd {
        var id: JobID
        var queue: QueueName
        var result: JobResult
        var endedAt: Date
    }

    /// Keeps a started job's process record, with its `started` event, for the next reaped
    /// write, so the processes started and the jobs ended in one turn of the control queue
    /// share one transaction.
    /// Until it is written, recovery finds the process by its cgroup or by the identity in its
    /// environment, as for a daemon that died between the claim and the spawn.
    func noteStarted(_ record: JobStore.ProcessRecord) {
        reapedProcesses.append(record)
        scheduleReapedWrites()
    }

    /// Keeps a job's end for the next reaped write; the queue is fed once it is written.
    func noteEnded(_ end: ReapedEnd) {
        reapedEnds.append(end)
        scheduleReapedWrites()
    }

    private func scheduleReapedWrites() {
        guard !reapedWritesScheduled else { return }
        reapedWritesScheduled = true
        // After the burst of callbacks already on the control queue: ends reaped together
        // are written together.
        later { $0.writeReaped() }
    }

    /// Writes the kept process records and ends now: the final ends of jobs this daemon runs
    /// in one transaction with the process records and the claims of the slots they freed,
    /// without reading a row back, and starts the claimed jobs once it committed; a retry, or
    /// any end when that transaction fails, one by one (``recordEnd(_:in:result:at:)``, which
    /// keeps an end the store refuses). Then feeds the queues that had ends again, for slots
    /// those freed.
    ///
    /// One transaction rather than two because a commit's cost is mostly the pages it writes
    /// to the WAL, and an end and a claim of the same queue change the same pages (the job
    /// indexes, `job_counts`, the event log).
    func writeReaped() {
        reapedWritesScheduled = false
        let processes = reapedProcesses
        let ends = reapedEnds
        reapedProcesses.removeAll()
        reapedEnds.removeAll()
        guard !processes.isEmpty || !ends.isEmpty else { return }

        var finals: [(previous: Job, end: JobStore.RunningEnd)] = []
        var others: [ReapedEnd] = []
        for end in ends {
            if pendingEnds[end.id] == nil, let job = runningJobs[end.id],
                case .enter(.finished(let result))? = try? decide(.endAttempt(end.result), for: job, now: end.endedAt)
            {
                finals.append((job, JobStore.RunningEnd(id: end.id, result: result, at: end.endedAt)))
            } else {
                others.append(end)
            }
        }
        // The final ends' slots, kept until now, go to the claims of the transaction that
        // writes those ends first. Each other end (a retry) keeps its slot until it is written
        // below. (When the transaction fails, the final ends go one by one below too, their
        // slots already free: no claim comes in between in this turn but a dependent's feed.)
        let finalIDs = Set(finals.map(\.end.id))
        for end in ends where finalIDs.contains(end.id) { freeSlot(of: end.id, in: end.queue) }
        let feeding = Set(ends.map(\.queue)).sorted { $0.rawValue < $1.rawValue }.compactMap { runners[$0] }
        var refusal: SchedulerError?
        do {
            let claimed = try backgroundWrite { () throws in
                try store.recordReaped(processes: processes, ends: finals.map(\.end)) {
                    // A claim that fails rolls the ends back with it: they are then written one
                    // by one below, and the queues fed on their own.
                    try feeding.map { ($0, try claimForStart($0)) }
                }
            }
            // The starts' `started` events are delivered once a barrier covers them: the ends'
            // and claims' bookkeeping asks for one too, but a turn may have only starts.
            if !processes.isEmpty { groupCommit.changed() }
            // Launched before the ends' bookkeeping, which may feed a queue again (a succeeded
            // job's dependents queued): by then the claimed jobs must hold their slots and
            // count for their owners, or that feed would claim past the queue's limits.
            for (runner, jobs) in claimed { start(jobs, in: runner) }
            // Results held ahead of these ends (a database locked meanwhile) are written now.
            if heldEnds?.isHolding == true { for (_, end) in finals { heldEnds?.release(end.id) } }
            for (previous, end) in finals {
                var job = previous
                job.state = .finished(end.result)
                // As stored: to the microsecond.
                job.finishedAt = Timestamp.date(microseconds: Timestamp.microseconds(end.at))
                job.pid = nil
                // As markFinished clears them: a finished job is neither held nor suspended.
                job.held = false
                job.suspended = false
                do {
                    try finished(previous, as: job)
                } catch {
                    DaemonLog.error("cannot settle what depends on job \(end.id): \(error)")
                }
            }
        } catch {
            // A full disk or another process's lock: the ends are kept at once below (in
            // held-ends), not tried again one by one.
            let cause = storageError(error)
            refusal = cause.isStoreRefusal ? cause : nil
            // The process records on their own, as before the ends were added to them: every
            // attempt's `started` event comes before its end's.
            do {
                if !processes.isEmpty {
                    try backgroundWrite { () throws in try store.recordReaped(processes: processes, ends: []) }
                    groupCommit.changed()
                }
            } catch {
                DaemonLog.error("cannot record the start of \(processes.count) job(s): \(error)")
            }
            // One by one: each is written, or kept until the store takes writes again.
            others = ends
        }
        for end in others {
            recordEnd(end.id, in: end.queue, result: end.result, at: end.endedAt, refused: refusal)
            freeSlot(of: end.id, in: end.queue)
        }
        for end in ends { runningJobs[end.id] = nil }
        // Nothing to do, without a query, where the claims took every free slot.
        for runner in feeding { feed(runner) }
        finishShutdownIfIdle()
    }
}
