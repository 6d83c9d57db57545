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

    /// Keeps a started job's process record for the next reaped write, so the processes
    /// started and the jobs ended in one turn of the control queue share one transaction.
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
    /// in one transaction with the process records, without reading a row back; a retry, or
    /// any end when that transaction fails, one by one (``recordEnd(_:in:result:at:)``, which
    /// keeps an end the store refuses). Then feeds the queues that had ends.
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
        let ending = Set(ends.map(\.id))
        do {
            try store.recordReaped(processes: processes.filter { !ending.contains($0.id) }, ends: finals.map(\.end))
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
            if !processes.isEmpty { DaemonLog.error("cannot record the start of \(processes.count) job(s): \(error)") }
            // One by one: each is written, or kept until the store takes writes again.
            others = ends
        }
        for end in others {
            recordEnd(end.id, in: end.queue, result: end.result, at: end.endedAt)
        }
        for end in ends { runningJobs[end.id] = nil }
        for queue in Set(ends.map(\.queue)) {
            if let runner = runners[queue] { feed(runner) }
        }
        finishShutdownIfIdle()
    }
}
