import Dispatch
import Foundation
import OrchestratorAPI

// MARK: - Retention limits, held while the daemon runs

extension Scheduler {
    /// How far past `--event-retention` the event log may grow before it is trimmed back to
    /// the limit: 1% of it (at least 1), so the log is trimmed once per that many events
    /// instead of once per commit.
    static func eventRetentionSlack(_ limit: Int) -> Int64 {
        Int64(max(1, limit / 100))
    }

    /// Trims the event log to the newest `--event-retention` events once it holds more than
    /// the limit plus ``eventRetentionSlack(_:)``. Runs after each delivery of new events, so
    /// it costs nothing until then: the count is the span of sequence numbers since the last
    /// trim (the log is only ever cut from its old end), not a `COUNT(*)`. Call on the
    /// control queue.
    func trimEventLog() {
        let limit = Int64(configuration.eventRetention)
        guard lastDeliveredSeq - eventLogTrimmedThrough > limit + Self.eventRetentionSlack(configuration.eventRetention) else { return }
        do {
            try eventLog.prune(through: lastDeliveredSeq - limit)
            eventLogTrimmedThrough = lastDeliveredSeq - limit
        } catch {
            DaemonLog.error("cannot trim the event log: \(error)")
        }
    }

    /// After a job finished: holds the retention limits. The count limit is checked against
    /// the tracked counts (no query); the age limit's timer is armed when none is, and looked
    /// at again when the job had dependencies, which it may have kept from being pruned.
    func finishedForRetention(_ job: Job) {
        trimToRetentionCount()
        if configuration.retentionAge != nil && (ageRetentionTimer == nil || !job.spec.after.isEmpty) {
            scheduleAgeRetention()
        }
    }

    /// Deletes the oldest finished jobs beyond `--retention-count` (never one a live job
    /// depends on), a page per turn of the control queue; once done, starts again if more
    /// jobs finished meanwhile.
    func trimToRetentionCount() {
        guard let limit = configuration.retentionCount, !isStopping, !countTrimActive else { return }
        let finished = totalCounts.finished
        guard finished > limit else { return }
        countTrimActive = true
        prunePage(before: nil, atMost: finished - limit, after: nil, total: 0) { [weak self] result in
            // Called on the control queue (prunePage's contract).
            self?.assumeIsolated { $0.countTrimmed(result, limit: limit) }
        }
    }

    /// The end of a trim to the retention count.
    private func countTrimmed(_ result: Result<Int, SchedulerError>, limit: Int) {
        countTrimActive = false
        switch result {
        case .success(let count):
            if count > 0 { DaemonLog.debug("retention: pruned \(count) finished jobs beyond \(limit)") }
            // More finished during the walk; a walk that deleted nothing found only jobs
            // live ones depend on, and waits for the next finish.
            if count > 0 && totalCounts.finished > limit { trimToRetentionCount() }
        case .failure(let error):
            DaemonLog.error("retention: \(error)")
        }
    }

    /// Arms the one timer for when the oldest prunable finished job reaches
    /// `--retention-age`; it prunes every job that old, then arms itself for the next. An
    /// armed timer is only replaced by an earlier one.
    func scheduleAgeRetention() {
        guard let age = configuration.retentionAge, !isStopping else { return }
        let oldest: Date?
        do {
            oldest = try store.earliestPrunableFinish()
        } catch {
            DaemonLog.error("retention: cannot read the oldest finished job: \(error)")
            return
        }
        // None: the next job to finish arms it (finishedForRetention).
        guard let oldest else { return }
        let due = oldest.addingTimeInterval(age.timeInterval)
        if let ageRetentionAt, ageRetentionAt <= due, ageRetentionTimer != nil { return }
        ageRetentionTimer?.cancel()
        let timer = makeTimer { scheduler in
            guard !scheduler.isStopping else { return }
            scheduler.ageRetentionTimer = nil
            scheduler.ageRetentionAt = nil
            let cutoff = Date().addingTimeInterval(-age.timeInterval)
            scheduler.prunePage(before: cutoff, atMost: nil, after: nil, total: 0) { [weak scheduler] result in
                switch result {
                case .success(let count):
                    if count > 0 { DaemonLog.debug("retention: pruned \(count) finished jobs older than \(TimeSpan.format(age))") }
                    // Called on the control queue (prunePage's contract).
                    scheduler?.assumeIsolated { $0.scheduleAgeRetention() }
                case .failure(let error):
                    DaemonLog.error("retention: \(error)")
                }
            }
        }
        // Wall clock, as finish times are; 10 ms late rather than early, so the job is past
        // the age when the timer fires (and a timer never spins).
        timer.schedule(wallDeadline: .now() + max(0, due.timeIntervalSinceNow) + 0.01)
        ageRetentionTimer = timer
        ageRetentionAt = due
        timer.activate()
    }
}
