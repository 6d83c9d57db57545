import Foundation
import Glibc
import OrchestratorAPI

// MARK: - Crash recovery

extension Scheduler {
    /// Settles jobs a previous daemon recorded as running: whatever survives of
    /// each one is killed, then the job is retried when it has attempts left, else recorded as
    /// `interrupted`. Survivors are the recorded process group when its leader is still the
    /// process started (same boot, pid and start time, so a reused pid is never killed), and
    /// any group with a process carrying the job's `ORCHD_JOB_ID` and `ORCHD_STATE_DIR`. With
    /// cgroup containment, every job cgroup the previous daemon left is killed first
    /// (`cgroup.kill`) and waited for until `populated 0`, then removed: whatever escaped the
    /// process groups is down before anything is retried. Hooks the previous daemon left
    /// running are killed too: their cgroups (`hook-*`), or (process-group containment) every
    /// group with a process carrying an `ORCHD_HOOK_ID` and this `ORCHD_STATE_DIR`.
    /// - Returns: how many jobs were recovered.
    func recoverInterruptedJobs() throws -> Int {
        killLeftoverCgroups()
        killLeftoverHookGroups()
        let all = try store.runningJobs()
        // Attempts in Slurm go on without orchd: re-attached, not killed (reattachSlurmJobs).
        slurmAttemptsToReattach = all.filter { $0.slurmJobID != nil }
        let records = all.filter { $0.slurmJobID == nil }
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

    /// Re-attaches to the attempts a previous daemon left in Slurm: each is followed again by
    /// its stored Slurm job ID, or, when orchd died while submitting it, looked for by its
    /// comment (``SlurmExecutor/reattach(slurmJobID:launch:onStarted:onEnd:)``). Their ends,
    /// including those that came while orchd was down, are recorded as they are observed; none
    /// is submitted again. They count against their queue's concurrency like any attempt.
    func reattachSlurmJobs() {
        let records = slurmAttemptsToReattach
        slurmAttemptsToReattach = []
        for record in records {
            let job = record.job
            let id = job.id
            let runner = runner(for: job.spec.queue)
            let executor = slurmExecutor(for: runner.name, settings: runner.settings.executor)
            let launch = ExecutorLaunch(
                job: job, request: launchRequest(for: job), operationQueue: runner.operationQueue,
                teardownGrace: configuration.teardownGrace)
            let queue = runner.name
            DaemonLog.info("job \(id): following Slurm job \(record.slurmJobID.flatMap { $0.isEmpty ? nil : $0 } ?? "(submission not recorded)") again")
            operations[id] = executor.reattach(
                slurmJobID: record.slurmJobID ?? "", launch: launch,
                onStarted: { [weak self] outcome in self?.assumeIsolated { $0.operationStarted(id, outcome) } },
                onEnd: { [weak self] end in self?.assumeIsolated { $0.operationFinished(id, in: queue, end: end) } })
            runningJobs[id] = job
            runner.inFlight.insert(id)
            // Counts against its owner's share (max-running-per-user) like any running job.
            runner.noteRunning(job.submitterUid, 1)
        }
    }

    /// Kills the process groups of hooks a previous daemon left running (found by their
    /// `ORCHD_HOOK_ID`; in cgroup containment their cgroups are already killed).
    private func killLeftoverHookGroups() {
        for group in ProcessIdentity.processGroupsOfHooks(stateDirectory: configuration.stateDirectory).map({ ProcessGroup(id: $0) }) {
            group.signal(SIGKILL)
            group.waitUntilGone(timeout: .seconds(5))
            DaemonLog.warning("killed process group \(group.id) of a hook left by the previous daemon")
        }
    }

    /// Kills and removes every job and hook cgroup of this daemon's subtree. At start-up none belongs to
    /// a live job of ours (the state directory lock rules out a second daemon), so each is a
    /// previous incarnation's.
    private func killLeftoverCgroups() {
        let groups = containment.jobGroups() + containment.hookGroups()
        let populated = groups.filter(\.isPopulated)
        for group in populated {
            let code = group.kill()
            if code != 0 {
                DaemonLog.error("cannot kill cgroup \(group.path): \(LaunchError.describe(code)); signalling its members")
                group.signal(SIGKILL)
            }
        }
        for group in populated {
            if group.waitUntilEmpty(timeout: .seconds(10)) {
                DaemonLog.warning("killed the processes left in cgroup \(group.path) by the previous daemon")
            } else {
                DaemonLog.error("cgroup \(group.path) still has processes 10 s after cgroup.kill")
            }
        }
        for group in groups {
            let code = group.remove()
            if code != 0 { DaemonLog.warning("cannot remove cgroup \(group.path): \(LaunchError.describe(code))") }
        }
    }
}
