import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

/// A full file system or a database locked by another process: requests fail with an error
/// that says so, and a job's end that cannot be written is kept in memory and written once
/// the store takes writes again, so no end is lost while orchd runs.
extension Scheduler {
    /// A job's end the store refused; written by ``retryPendingEnds()``.
    struct PendingEnd {
        /// The job's queue, to feed it once the end is written.
        var queue: QueueName
        /// How the attempt ended.
        var result: JobResult
        /// When it ended (the time recorded, not the time of the write).
        var endedAt: Date
        /// Why the store refused it last.
        var cause: SchedulerError
    }

    /// The first wait before writing kept ends again, doubled after each failure up to
    /// ``storageRetryCap``. Any successful commit meanwhile retries at once.
    static let storageRetryBase: Duration = .seconds(1)
    /// The longest wait between two tries: a full disk that gets room again, or a lock
    /// another process lets go of, has the kept ends written within this. A try that fails
    /// costs a checkpoint attempt and one refused write, and logs nothing.
    static let storageRetryCap: Duration = .seconds(4)

    /// The refusal a store error becomes: full disk and locked database by name, anything
    /// else as a storage failure with the store's text.
    func storageError(_ error: any Error) -> SchedulerError {
        if let error = error as? DatabaseError {
            if error.isFull {
                let free = Self.freeBytes(configuration.stateDirectory)
                // Room where the database is: the full one is where SQLite puts its temporary
                // files (statement journals past their threshold, large sorts), a tmpfs say.
                guard free < Self.roomyFreeBytes else {
                    return .storage(
                        "a write failed for want of space, yet the file system of the state directory \(configuration.stateDirectory) has \(free) bytes free: "
                            + "SQLite's temporary files (in $SQLITE_TMPDIR, else $TMPDIR, else /var/tmp) may be on a full file system")
                }
                noteFullStore()
                return .storageFull(stateDirectory: configuration.stateDirectory, freeBytes: free)
            }
            if error.isBusy { return .databaseLocked(path: store.database.path) }
        }
        return .storage(String(describing: error))
    }

    /// Bytes an unprivileged process may still write on the file system of `path`
    /// (statvfs(3): `f_bavail` blocks of `f_frsize`); 0 when unknown.
    static func freeBytes(_ path: String) -> UInt64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize)
    }

    /// Records the end of a running attempt; when the store refuses it (full, locked, an I/O
    /// error), keeps it and tries again later instead of losing it.
    /// - Parameter refused: the store has just refused a write in this turn for this reason:
    ///   the end is kept at once, without a write that would wait for the lock again (ends
    ///   kept one by one, 0.1 s each, left many in neither file when orchd was killed).
    func recordEnd(_ id: JobID, in queue: QueueName, result: JobResult, at endedAt: Date, refused: SchedulerError? = nil) {
        let attempt = runningJobs[id]?.attempt
        do throws(SchedulerError) {
            if let refused { throw refused }
            try backgroundWrite { () throws(SchedulerError) in try attemptEnded(id, result: result, at: endedAt) }
            forgetPendingEnd(id)
        } catch {
            switch error {
            case _ where error.isStoreRefusal:
                let isNew = pendingEnds[id] == nil
                pendingEnds[id] = PendingEnd(queue: queue, result: result, endedAt: endedAt, cause: error)
                if isNew {
                    // On disk beside the database, for recovery should orchd die before the
                    // database takes it.
                    if let attempt {
                        heldEnds?.hold(HeldEndJournal.Entry(
                            id: id, attempt: attempt,
                            ending: JobStore.Ending(result: result, isFinal: retriesCancelled.contains(id)), endedAt: endedAt))
                    }
                    DaemonLog.error(
                        "cannot record the end of job \(id) (\(result.name)) now: \(error.refusalReason); keeping it in memory and writing it once the database takes writes again")
                }
                failCancelsWaiting(for: id, result: result, because: error)
                scheduleStorageRetry()
            default:
                // Gone (pruned) or no longer running: nothing left to record.
                forgetPendingEnd(id)
                DaemonLog.error("cannot record the end of job \(id) (\(result.name)): \(error)")
            }
        }
    }

    /// Writes the kept end of job `id` (reported in this turn, or refused by the store), if
    /// there is one, before a request acts on the job:
    /// its process is gone, so the stored `running` is stale, and deciding on it would replace
    /// the real result (a cancel would record `cancelled` over an exit 0).
    /// - Throws: the store's refusal, as ``storageError(_:)`` names it, when it still
    ///   refuses; the request then fails and the end stays kept.
    func settlePendingEnd(of id: JobID) throws(SchedulerError) {
        // Reported in this turn and not written yet: write this turn's ends first.
        if reapedEnds.contains(where: { $0.id == id }) { writeReaped() }
        guard let end = pendingEnds[id] else { return }
        try attemptEnded(id, result: end.result, at: end.endedAt)
        forgetPendingEnd(id)
    }

    /// Counts job `id`, whose end the store just refused, as kept for the cancels waiting
    /// for it (``WaitRequest/kept``), and answers those with no other job left; other waits
    /// go on until the end is written.
    private func failCancelsWaiting(for id: JobID, result: JobResult, because cause: SchedulerError) {
        guard let requests = waiters[id], requests.contains(where: \.failsOnKeptEnd) else { return }
        waiters[id]?.removeAll { $0.failsOnKeptEnd }
        if waiters[id]?.isEmpty == true { waiters[id] = nil }
        for request in requests where request.failsOnKeptEnd {
            request.remaining.remove(id)
            request.kept[id] = result
            request.keptCause = request.keptCause ?? cause
            if request.remaining.isEmpty { answer(request) }
        }
    }

    /// Drops job `id`'s kept end, written or no longer to be written, and its slot in
    /// ``HeldEndJournal`` (also one a result ahead of its end took, ``noteEnding``).
    func forgetPendingEnd(_ id: JobID) {
        pendingEnds.removeValue(forKey: id)
        heldEnds?.release(id)
    }

    /// The longest a write waits for another process's lock once orchd has started: one no
    /// request waits for (``backgroundWrite(_:)``), and since start-up ended any other (a
    /// request then fails with `DatabaseLocked`, which orchctl retries).
    static let backgroundBusyTimeout: Duration = .milliseconds(100)

    /// Runs `body`, a write that no request waits for (a job's end, a claim, a result ahead of
    /// a teardown, a retry of a kept end), waiting at most ``backgroundBusyTimeout`` for the
    /// database's lock when another process holds it, never the whole busy timeout (5 s):
    /// - an end refused so is kept in `held-ends` at once (``recordEnd(_:in:result:at:)``),
    ///   where the next start finds it; while the write waited, an end was in neither file,
    ///   and a `kill -9` then had the job run again (a breaker: 6 of 6 over a 5 s lock);
    /// - every such write held the control queue, and the requests and reads queued behind
    ///   it, for the whole wait, and a `status` waited 50 s behind a few of them during a
    ///   14 s lock.
    /// A write that fails so is kept and tried again as before.
    func backgroundWrite<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        try store.database.withBusyTimeout(Self.backgroundBusyTimeout, body)
    }

    /// Arms the retry timer, unless armed: after the current backoff.
    func scheduleStorageRetry() {
        guard storageRetryTimer == nil else { return }
        // Neither room coming back nor a lock another process lets go of is seen: tried at
        // least every few seconds (a try under a lock costs the control queue 0.1 s), so kept
        // ends are written soon after either.
        let delay = min(storageRetryDelay, Self.storageRetryCap)
        storageRetryDelay = min(storageRetryDelay * 2, Self.storageRetryCap)
        let timer = makeTimer { scheduler in
            scheduler.storageRetryTimer = nil
            scheduler.reclaimLogSpace()
            scheduler.retryPendingEnds()
        }
        timer.schedule(deadline: .now() + delay.dispatchInterval)
        storageRetryTimer = timer
        timer.activate()
    }

    /// Before a retry: moves the WAL's pages into the database file and truncates the WAL. When
    /// orchd's own WAL is what filled the file system, it is the space to win back, and SQLite
    /// reuses a WAL's space only after a checkpoint, which it starts by itself only at 1,000
    /// pages: without this, space freed by the admin went to the WAL again and the store
    /// stayed full. It needs room for the pages the database file gains; when there is none,
    /// it fails and the retry reports the refusal as before.
    func reclaimLogSpace() {
        do {
            _ = try store.database.checkpointTruncatingLog(waitingAtMost: .zero)
        } catch {
            // Still full, or locked by another process: the retry that follows says which.
        }
    }

    /// The free space under which the WAL stays small once the store was full: room for a
    /// WAL of the usual 4 MiB many times over.
    static let roomyFreeBytes: UInt64 = 64 << 20

    /// The store refused a write for want of space: from now on the WAL is kept small
    /// (``Database/setShortOfSpace(_:)``) until the file system has ``roomyFreeBytes`` free.
    func noteFullStore() {
        guard shortOfSpaceCheckedAt == nil else { return }
        do {
            try store.database.setShortOfSpace(true)
            shortOfSpaceCheckedAt = .now
            DaemonLog.warning("the file system of \(configuration.stateDirectory) is full: keeping the database's WAL small until it has \(Self.roomyFreeBytes >> 20) MiB free")
        } catch {
            DaemonLog.error("cannot keep the database's WAL small: \(error)")
        }
    }

    /// While short of space, at most once a second: back to the usual WAL once the file
    /// system has room again.
    private func checkFreeSpace() {
        guard let checked = shortOfSpaceCheckedAt, checked.duration(to: .now) >= .seconds(1) else { return }
        shortOfSpaceCheckedAt = .now
        guard Self.freeBytes(configuration.stateDirectory) >= Self.roomyFreeBytes else { return }
        do {
            try store.database.setShortOfSpace(false)
            shortOfSpaceCheckedAt = nil
            DaemonLog.info("the file system of \(configuration.stateDirectory) has room again: the database's WAL grows as usual")
        } catch {
            DaemonLog.error("cannot let the database's WAL grow as usual: \(error)")
        }
    }

    /// A commit just succeeded, so the store may take writes again: retry now rather than at
    /// the timer.
    func storageMayHaveRecovered() {
        checkFreeSpace()
        guard !pendingEnds.isEmpty || dependentsUnsettled || dueJobsUnqueued, !storageRetryQueued else { return }
        storageRetryQueued = true
        // Not from inside the change that succeeded: after it, on the control queue.
        later { scheduler in
            scheduler.storageRetryQueued = false
            scheduler.retryPendingEnds()
        }
    }

    /// Writes the kept ends, oldest first, queues the delayed jobs whose start came while the
    /// store refused, and starts what waited for free slots or for a claim the store refused.
    func retryPendingEnds() {
        let ends = pendingEnds.sorted { $0.value.endedAt < $1.value.endedAt }
        for (id, end) in ends {
            recordEnd(id, in: end.queue, result: end.result, at: end.endedAt)
            if pendingEnds[id] != nil { break }  // still refused: the rest will be too
        }
        if pendingEnds.isEmpty && dependentsUnsettled {
            do throws(SchedulerError) {
                dependentsUnsettled = false
                try settleWaitingDependents()
            } catch {
                dependentsUnsettled = true
                DaemonLog.error("cannot settle the waiting jobs whose dependencies ended yet: \(error)")
                scheduleStorageRetry()
            }
        }
        if dueJobsUnqueued {
            do {
                dueJobsUnqueued = false
                _ = try promoteDueJobs()
            } catch {
                dueJobsUnqueued = true
                DaemonLog.error("cannot queue delayed jobs: \(error)")
                scheduleStorageRetry()
            }
        }
        if pendingEnds.isEmpty && !dependentsUnsettled && !dueJobsUnqueued {
            storageRetryTimer?.cancel()
            storageRetryTimer = nil
            storageRetryDelay = Self.storageRetryBase
            if !ends.isEmpty { DaemonLog.info("recorded the \(ends.count) job end(s) kept while the database refused writes") }
        }
        for runner in runners.values { feed(runner) }
    }

    /// At the end of a shutdown: one last try to write the kept ends; what the store still
    /// refuses is logged by job and left to the next start's recovery, which records the end
    /// ``HeldEndJournal`` kept (else it finds the job running without a process: retried or
    /// recorded `interrupted`).
    func writeOrAbandonPendingEnds() {
        storageRetryTimer?.cancel()
        storageRetryTimer = nil
        for (id, end) in pendingEnds.sorted(by: { $0.value.endedAt < $1.value.endedAt }) {
            do throws(SchedulerError) {
                try attemptEnded(id, result: end.result, at: end.endedAt)
                heldEnds?.release(id)
            } catch {
                DaemonLog.error(
                    "stopping without the end of job \(id) (\(end.result.name)): \(error); the next start records it")
            }
        }
        pendingEnds.removeAll()
    }
}
