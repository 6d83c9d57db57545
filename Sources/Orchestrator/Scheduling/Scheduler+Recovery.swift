import Foundation
import Glibc
import OrchestratorAPI

// MARK: - Crash recovery

extension Scheduler {
    /// Settles jobs a previous daemon recorded as running: whatever survives of
    /// each one is killed, then the attempt ends with the result stored ahead of its end (a
    /// cancel or a timeout under way, a main process that had exited:
    /// ``noteEnding(_:_:)``), else as `interrupted`; it is retried when that result allows it
    /// and attempts are left. Survivors are the recorded process group when its leader is still the
    /// process started (same boot, pid and start time, so a reused pid is never killed), and
    /// any group with a process carrying the job's `ORCHD_JOB_ID` and `ORCHD_STATE_DIR`, or
    /// those of a job of this daemon that is not recorded running (a database lost after a
    /// crash), unless Slurm runs it (``ProcessIdentity/processGroups(ofJobs:sparing:orHooksOf:)``). With
    /// cgroup containment, every job cgroup the previous daemon left is killed first
    /// (`cgroup.kill`) and waited for until `populated 0`, then removed: whatever escaped the
    /// process groups is down before anything is retried. Hooks the previous daemon left
    /// running are killed too: their cgroups (`hook-*`), or (process-group containment) every
    /// group with a process carrying an `ORCHD_HOOK_ID` and this `ORCHD_STATE_DIR`.
    /// - Returns: the queues of the jobs recovered, each once per job.
    func recoverInterruptedJobs() throws -> [QueueName] {
        killLeftoverCgroups()
        let all = try store.runningJobs()
        // Attempts in Slurm go on without orchd: re-attached, not killed (reattachSlurmJobs).
        slurmAttemptsToReattach = all.filter { $0.slurmJobID != nil }
        let records = all.filter { $0.slurmJobID == nil }
        // Each job's recorded group, when its leader is still the process we started; and
        // every group holding a process with the identity of one of these jobs or of a hook in
        // its environment: survivors whose leader already exited, processes spawned before
        // their pid was recorded, and the hooks the previous daemon left running.
        let stateDirectory = configuration.stateDirectory
        let recorded = records.compactMap { record -> Int32? in
            guard let pid = record.job.pid, pid > 1, let ticks = record.processStartTicks,
                record.bootID == ProcStat.bootID, ProcStat.startTicks(pid: pid) == ticks
            else { return nil }
            // With cgroups every process of this daemon's jobs is in its own subtree, emptied
            // above, so a recorded process whose environment names another state directory is
            // the job of the daemon this directory was copied from (the same pids and start
            // times in the copied record), and not ours to kill.
            if containment.subtree != nil, ProcessIdentity.namesAnotherStateDirectory(pid, than: stateDirectory) {
                DaemonLog.warning("job \(record.job.id) is recorded running as pid \(pid), which belongs to another state directory's orchd (was this state directory copied from a running one?); leaving it alone")
                return nil
            }
            return pid
        }
        let jobs = Set(records.map { $0.job.id.rawValue })
        let spared = Set(slurmAttemptsToReattach.map { $0.job.id.rawValue })
        let killed = Self.killUntilNoneLeft(first: recorded, expectingSome: !records.isEmpty) {
            ProcessIdentity.processGroups(ofJobs: jobs, sparing: spared, orHooksOf: stateDirectory)
        }
        if !killed.isEmpty { DaemonLog.warning("killed \(Self.describe(killed)) left by the previous daemon") }
        let endings = records.isEmpty ? [:] : try store.endings()
        // Ends the database refused before the previous daemon stopped: the attempt is over,
        // with that result, at that time.
        let held = heldEnds?.entries() ?? [:]
        for record in records {
            let job = record.job
            let heldEnd = held[job.id].flatMap { $0.attempt == job.attempt ? $0 : nil }
            // A result known before the previous daemon stopped (an end the database refused,
            // a cancel or a timeout under way, a main process that had exited) is the
            // attempt's; else it was interrupted.
            let ending = heldEnd?.ending ?? endings[job.id]
            let result = ending?.result ?? .interrupted
            // Spawned, but killed with orchd before its pid was recorded, which is when its
            // `started` event is: the log file its process creates before its exec says it
            // started, so that every attempt that ran has its event (and its `started` hook).
            if job.pid == nil,
                access(logPath(of: job.id, owner: job.submitterUid, attempt: job.attempt, stream: .stdout), F_OK) == 0
            {
                try store.recordStartedWithoutProcess(job.id)
            }
            // Cancelled while the processes its main process left were torn down: its own
            // result stays, not retried.
            if ending?.isFinal == true { retriesCancelled.insert(job.id) }
            try attemptEnded(job.id, result: result, at: heldEnd?.endedAt ?? Date())
            let retried = RetryPolicy.isRetryable(result) && ending?.isFinal != true && job.attempt < job.maxAttempts
            let what = heldEnd != nil ? "had ended as \(result.name) (kept in \(HeldEndJournal.fileName), the database refusing it)"
                : endings[job.id] == nil ? "was running" : "was ending as \(result.name)"
            DaemonLog.warning("job \(job.id) \(what) when the previous daemon stopped; \(retried ? "retrying it" : "recorded as \(result.name)")")
        }
        // Recorded now, or for attempts the database no longer records as running.
        heldEnds?.releaseAll()
        return records.map(\.job.spec.queue)
    }

    /// Re-attaches to the attempts a previous daemon left in Slurm: each is followed again by
    /// its stored Slurm job ID, or, when orchd died while submitting it, looked for by its
    /// comment (``SlurmExecutor/reattach(slurmJobID:launch:onStarted:onEnd:)``). Their ends,
    /// including those that came while orchd was down, are recorded as they are observed; none
    /// is submitted again. They count against their queue's concurrency like any attempt.
    func reattachSlurmJobs() {
        let records = slurmAttemptsToReattach
        slurmAttemptsToReattach = []
        // A cancel or timeout stored ahead of its end: the previous orchd's scancel may not
        // have reached Slurm (its controller down), so the stop is made again.
        let endings = records.isEmpty ? [:] : (try? store.endings()) ?? [:]
        for record in records {
            let job = record.job
            let id = job.id
            let runner = runner(for: job.spec.queue)
            let executor = slurmExecutor(for: runner.name, settings: runner.settings.executor)
            let launch = ExecutorLaunch(
                job: job, request: launchRequest(for: job), operationQueue: runner.operationQueue,
                teardownGrace: configuration.teardownGrace)
            let queue = runner.name
            let storedStop = endings[id].flatMap { ending in [StopReason.cancelled, .timedOut].first { $0.jobResult == ending.result } }
            DaemonLog.info("job \(id): following Slurm job \(record.slurmJobID.flatMap { $0.isEmpty ? nil : $0 } ?? "(submission not recorded)") again")
            operations[id] = executor.reattach(
                slurmJobID: record.slurmJobID ?? "", launch: launch, stopBegunBeforeRestart: storedStop != nil,
                onStarted: { [weak self] outcome in self?.assumeIsolated { $0.operationStarted(id, outcome) } },
                onEnd: { [weak self] end in self?.assumeIsolated { $0.operationFinished(id, in: queue, end: end) } })
            runningJobs[id] = job
            runner.inFlight.insert(id)
            // Counts against its owner's share (max-running-per-user) like any running job.
            runner.noteRunning(job.submitterUid, 1)
            if let ending = endings[id], let reason = storedStop {
                if ending.isFinal { retriesCancelled.insert(id) }
                DaemonLog.info("job \(id): stopping it again (\(ending.result.name), stored before the previous daemon stopped)")
                operations[id]?.stop(reason: reason, signal: nil)
            }
        }
    }

    /// Kills the process groups `find` returns (and `first`), and looks again, until the
    /// looks have found nothing for ``quietPeriod`` (at least three of them); a first look
    /// that finds nothing, where nothing was expected, ends it at once (a restart after a
    /// clean stop pays one look). One look is not
    /// enough: a process may start another in a new session between the look and the kill,
    /// or exit after the look listed `/proc` and before it read the process's environment,
    /// having started one the listing missed; a chain of processes each doing so would run on
    /// beside the retry of its job. Each look reads every process, whoever its parent now is.
    /// Gives up after ``longestRecoverySweep``.
    /// - Parameters:
    ///   - first: groups known without a look (jobs' recorded process groups).
    ///   - expectingSome: whether processes may be left (jobs were running).
    ///   - find: a look: the process groups holding a process with the identities sought.
    /// - Returns: the groups killed, each once, in the order found.
    static func killUntilNoneLeft(first: [Int32] = [], expectingSome: Bool, _ find: () -> [Int32]) -> [Int32] {
        var killed: [Int32] = []
        var seen: Set<Int32> = []
        var groups = first
        let clock = ContinuousClock()
        let giveUp = clock.now + longestRecoverySweep
        var quietSince = clock.now
        var emptyLooks = 0
        while clock.now < giveUp {
            groups += find()
            if groups.isEmpty {
                emptyLooks += 1
                if !expectingSome && killed.isEmpty { break }
                if emptyLooks >= 3 && quietSince.duration(to: clock.now) >= quietPeriod { break }
                continue
            }
            let found = groups.map { ProcessGroup(id: $0) }
            for group in found { group.signal(SIGKILL) }
            for group in found { group.waitUntilGone(timeout: .seconds(5)) }
            for id in groups where seen.insert(id).inserted { killed.append(id) }
            groups = []
            emptyLooks = 0
            quietSince = clock.now
        }
        return killed
    }

    /// How long the looks of ``killUntilNoneLeft(first:expectingSome:_:)`` must find nothing, and how long
    /// it looks at most.
    static let quietPeriod: Duration = .milliseconds(50)
    static let longestRecoverySweep: Duration = .seconds(30)

    /// "process group 123", or "3 process groups (123, 456, 789)", for the log.
    private static func describe(_ groups: [Int32]) -> String {
        guard groups.count > 1 else { return "process group \(groups[0])" }
        let shown = groups.prefix(8).map(String.init).joined(separator: ", ")
        return "\(groups.count) process groups (\(shown)\(groups.count > 8 ? ", …" : ""))"
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

// MARK: - Endings kept for recovery

extension Scheduler {
    /// Stores the result job `id`'s running attempt will end with, now that it is known and
    /// before its processes are gone (``JobStore/recordEnding(_:_:)``): a crash during the
    /// teardown's grace then loses neither a cancel nor a main process's result. A result
    /// that is not stored (`interrupted` at a stop of orchd) is left to recovery as before.
    /// - Parameters:
    ///   - id: the job.
    ///   - result: the result it will end with.
    ///   - replacing: it replaces a result stored before (``JobStore/recordEnding(_:_:replacing:final:)``).
    ///   - final: a cancel: no retry follows the attempt, whatever its result.
    func noteEnding(_ id: JobID, _ result: JobResult, replacing: Bool = false, final: Bool = false) {
        guard JobStore.endingText(result) != nil else { return }
        do {
            try backgroundWrite { () throws in try store.recordEnding(id, result, replacing: replacing, final: final) }
            groupCommit.changed()
        } catch {
            // The teardown goes on. Kept in `held-ends` instead, which recovery reads as it
            // reads a stored result: a crash before the end is written then still records this
            // result and runs nothing again. Released once the end is written.
            var kept = false
            if let attempt = runningJobs[id]?.attempt {
                kept = heldEnds?.hold(HeldEndJournal.Entry(
                    id: id, attempt: attempt, ending: JobStore.Ending(result: result, isFinal: final), endedAt: Date())) ?? false
            }
            DaemonLog.warning(
                "job \(id): cannot store its result (\(result.name)) ahead of its end: \(storageError(error).refusalReason)\(kept ? "; kept in \(HeldEndJournal.fileName)" : "")")
        }
    }
}
