import Foundation
import Glibc
import OrchestratorAPI

// MARK: - Crash recovery

extension Scheduler {
    /// Settles jobs a previous daemon recorded as running (DESIGN.md §4): whatever survives of
    /// each one's process group is killed (only when the boot, pid and start time all match,
    /// so a reused pid is never killed), then the job is retried when it has attempts left,
    /// else recorded as `interrupted`.
    /// - Returns: how many jobs were recovered.
    func recoverInterruptedJobs() throws -> Int {
        let records = try store.runningJobs()
        for record in records {
            let job = record.job
            var groups: [ProcessGroup] = []
            if let pid = job.pid {
                if pid > 1, let ticks = record.processStartTicks, record.bootID == ProcStat.bootID,
                    ProcStat.startTicks(pid: pid) == ticks
                {
                    // The job leads its own process group (posix_spawn with SETSID).
                    groups.append(ProcessGroup(id: pid))
                }
            } else {
                // Claimed but its pid never recorded: it may have been spawned all the same.
                groups = ProcessIdentity.processGroups(ofJob: job.id.rawValue, stateDirectory: configuration.stateDirectory)
                    .map { ProcessGroup(id: $0) }
            }
            for group in groups {
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
