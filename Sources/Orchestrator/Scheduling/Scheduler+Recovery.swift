import Foundation
import Glibc
import OrchestratorAPI

// MARK: - Crash recovery

extension Scheduler {
    /// Settles jobs a previous daemon recorded as running: whatever survives of
    /// each one is killed, then the job is retried when it has attempts left, else recorded as
    /// `interrupted`. Survivors are the recorded process group when its leader is still the
    /// process started (same boot, pid and start time, so a reused pid is never killed), and
    /// any group with a process carrying the job's `ORCHD_JOB_ID` and `ORCHD_STATE_DIR`.
    /// - Returns: how many jobs were recovered.
    func recoverInterruptedJobs() throws -> Int {
        let records = try store.runningJobs()
        for record in records {
            let job = record.job
            // The recorded group, when its leader is still the process we started; and every
            // group holding a process with this job's identity in its environment: survivors
            // whose leader already exited, and processes spawned before their pid was recorded.
            var groups: Set<Int32> = []
            if let pid = job.pid, pid > 1, let ticks = record.processStartTicks, record.bootID == ProcStat.bootID,
                ProcStat.startTicks(pid: pid) == ticks
            {
                groups.insert(pid)
            }
            groups.formUnion(ProcessIdentity.processGroups(ofJob: job.id.rawValue, stateDirectory: configuration.stateDirectory))
            for group in groups.sorted().map({ ProcessGroup(id: $0) }) {
                group.signal(SIGKILL)
                group.waitUntilGone(timeout: .seconds(5))
                DaemonLog.warning("job \(job.id): killed process group \(group.id) left by the previous daemon")
            }
            try attemptEnded(job.id, result: .interrupted)
            DaemonLog.warning("job \(job.id) was running when the previous daemon stopped; \(job.attempt < job.maxAttempts ? "retrying it" : "recorded as interrupted")")
        }
        return records.count
    }
}
