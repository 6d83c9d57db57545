import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

/// Decides which job runs when, and records every change.
///
/// An actor: all mutable state is isolated to it, and its executor is one serial queue, the
/// control queue (``DispatchQueueExecutor``, docs/ARCHITECTURE.md, Concurrency). Callers
/// `await` its methods; its timers and its operations' callbacks fire on the control queue
/// and enter the actor with `assumeIsolated`, which the runtime checks. Nothing ever blocks
/// the control queue on an operation, whose completions must run on it. Each state change is
/// committed to the store before anyone is told of it.
///
/// Work is driven by events only: submissions, operation ends, queue changes, one wake-up
/// timer for the earliest delayed start, and one timeout timer per running job with a limit.
public actor Scheduler {
    /// Settings the daemon passes in.
    public struct Configuration: Sendable {
        /// Jobs run at once in a queue that sets no concurrency of its own.
        public var concurrency: Int
        /// The daemon's state directory; jobs see it as `$ORCHD_STATE_DIR`.
        public var stateDirectory: String
        /// Where each attempt's `<id>.<attempt>.out` and `<id>.<attempt>.err` are written.
        public var logDirectory: String
        /// How long a job gets between SIGTERM and SIGKILL when torn down.
        public var teardownGrace: Duration
        /// Retry backoff for queues that set none.
        public var retryPolicy: RetryPolicy
        /// Finished jobs older than this are pruned automatically; `nil` keeps them.
        public var retentionAge: Duration?
        /// Only this many finished jobs are kept (the newest); `nil` for no limit.
        public var retentionCount: Int?
        /// How many of the newest events the event log keeps.
        public var eventRetention: Int
        /// When replies that report a change go out: after the fsync, or once committed.
        public var sync: SyncPolicy = .always
        /// Whether each job runs as its submitter (the system service, run by root); jobs
        /// of root run as root either way. Off: every job runs as the daemon.
        public var runJobsAsSubmitter = false
        /// The most running jobs one user may have in a queue that sets no limit of its own;
        /// `nil`: no limit.
        public var maxRunningPerUser: Int? = nil
        /// Runs on the control queue when a group-commit barrier's `fdatasync` failed, with
        /// the error's text: what it covered may never reach the disk, so nothing is
        /// acknowledged from then on. The default ends the process at once with status 74
        /// (`EX_IOERR`, sysexits.h), as a crash would end it: a restart recovers what is on
        /// disk. The daemon also tells systemd why; tests record the call instead.
        public var durabilityLost: @Sendable (_ message: String) -> Void = { _ in _exit(Scheduler.durabilityLostExitStatus) }

        /// Creates a value with every field given.
        public init(
            concurrency: Int, stateDirectory: String, logDirectory: String, teardownGrace: Duration,
            retryPolicy: RetryPolicy = .standard,
            retentionAge: Duration? = nil, retentionCount: Int? = nil, eventRetention: Int = 100_000
        ) {
            self.concurrency = concurrency
            self.stateDirectory = stateDirectory
            self.logDirectory = logDirectory
            self.teardownGrace = teardownGrace
            self.retryPolicy = retryPolicy
            self.retentionAge = retentionAge
            self.retentionCount = retentionCount
            self.eventRetention = eventRetention
        }
    }

    /// How many jobs a request over many of them (a cancel, `retry --failed`) settles in one
    /// turn of the control queue. Between turns the other requests, the reaped ends and the
    /// watchdog's ping get theirs: a million queued jobs cancelled in one turn would hold the
    /// control queue for over a minute, past the units' `WatchdogSec=30s`. With turns of 250,
    /// `orchctl status` during a cancel of 100,000 queued jobs answered in 23 ms (median; 84 ms
    /// at the 90th percentile; release build, 2 CPUs).
    static let jobsPerTurn = 250

    /// The exit status of a daemon whose database could not be synced to disk
    /// (``Configuration/durabilityLost``): `EX_IOERR` of sysexits.h.
    public static let durabilityLostExitStatus: Int32 = 74

    /// The actor's executor, over the control queue.
    nonisolated let executor: DispatchQueueExecutor
    /// The serial queue the actor runs on; its dispatch sources fire here.
    nonisolated var controlQueue: DispatchQueue { executor.queue }
    /// Runs the tasks of requests, outside the actor, on the control queue too.
    nonisolated let requestExecutor: QueueTaskExecutor
    /// The calls being handled whose replies have not reached their connections yet (a stop
    /// waits for them; see ``requestRepliesHandedOver(timeout:)``).
    public nonisolated let unansweredRequests = UnansweredRequests()
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// Lifecycle observers, told of each event once it is durable.
    public nonisolated let observers = ObserverSet<any JobObserver>()
    /// Where each attempt's output is written (``Configuration/logDirectory``).
    nonisolated let logDirectory: String
    /// Whether jobs run as their submitter (``Configuration/runJobsAsSubmitter``).
    public nonisolated let runsJobsAsSubmitter: Bool

    let store: JobStore
    /// Makes committed changes durable in groups, and holds acknowledgements until they are.
    let groupCommit: GroupCommit
    /// The numbered event log, and how far it has been delivered to observers.
    let eventLog: EventLog
    var lastDeliveredSeq: Int64 = 0
    var subscribers: [EventSubscriber] = []
    var drainWaiters: [QueueName: [@Sendable (QueueInfo) -> Void]] = [:]
    var configuration: Configuration
    /// Runs the attempts of local queues (the default executor).
    let localExecutor: LocalExecutor
    /// The executors of queues that run their jobs on Slurm, by queue.
    var slurmExecutors: [QueueName: SlurmExecutor] = [:]
    /// Attempts a previous daemon left in Slurm, re-attached once the queues are loaded.
    var slurmAttemptsToReattach: [RunningJobRecord] = []
    /// Reaps the processes executors start that are not jobs (Slurm's commands).
    let commandReaper = ChildReaper()
    /// How job processes are kept hold of: a cgroup per attempt, or the process-group
    /// fallback.
    public nonisolated let containment: Containment
    var runners: [QueueName: QueueRunner] = [:]
    /// Attempts launched and not yet ended, by job, whatever their executor.
    var operations: [JobID: any ExecutorAttempt] = [:]
    /// The rows of the jobs those operations run, as last written by this daemon (claim,
    /// then the recorded process), so an end needs no read.
    var runningJobs: [JobID: Job] = [:]
    /// The per-queue counts were loaded from the store (at start, after recovery); from then
    /// on `changed` keeps them exact.
    var countsLoaded = false
    /// Jobs whose process was started by this daemon.
    var startedJobs: Set<JobID> = []
    /// Process records and ends reported in this turn of the control queue, written together
    /// in the next (Scheduler+ReapedWrites.swift).
    var reapedProcesses: [JobStore.ProcessRecord] = []
    var reapedEnds: [ReapedEnd] = []
    var reapedWritesScheduled = false
    var timeoutTimers: [JobID: any DispatchSourceTimer] = [:]
    var waiters: [JobID: [WaitRequest]] = [:]
    /// Followers of one attempt's output, told when that attempt is over (``attemptOver(_:attempt:)``).
    var attemptWatchers: [JobID: [(attempt: Int, done: @Sendable (Job?) -> Void)]] = [:]
    /// The timer for the earliest delayed start, and when it fires.
    var wakeUpTimer: (any DispatchSourceTimer)?
    var wakeUpAt: Date?
    /// The timer for the next finished job the retention age prunes, and when it fires.
    var ageRetentionTimer: (any DispatchSourceTimer)?
    var ageRetentionAt: Date?
    /// A trim to the retention count is scheduled or in progress.
    var countTrimActive = false
    /// Every event up to this sequence number has been deleted (the log's retention).
    var eventLogTrimmedThrough: Int64 = 0
    var isStopping = false
    /// Running jobs a cancel reached: their attempt's result is final, even the main process's
    /// own (it ended before the cancel), so no retry follows (``JobStateMachine/Context/retriesCancelled``).
    var retriesCancelled: Set<JobID> = []
    /// Cancels under way that take more than one turn; while there is one, no job starts
    /// (Scheduler+Cancelling.swift).
    var startsHeldByCancels = 0
    /// Job ends the store refused (full disk, locked database), kept until written
    /// (Scheduler+StorageFaults.swift).
    var pendingEnds: [JobID: PendingEnd] = [:]
    /// The file that keeps those ends across a crash, so that recovery records them rather
    /// than `interrupted`; `nil` when it could not be opened (Scheduler+StorageFaults.swift).
    var heldEnds: HeldEndJournal?
    /// A finished job's waiting dependents could not be settled (the store refused): settle
    /// them when it takes writes again (``settleWaitingDependents()``).
    var dependentsUnsettled = false
    /// Waiting jobs to fail because a dependency did not succeed, each with that dependency,
    /// the next one last (``failDependents()``).
    var dependentsToFail: [(dependent: JobID, dependency: JobID)] = []
    /// Whether ``failDependents()`` is under way further up the stack.
    var isFailingDependents = false
    /// Whether a later turn of the control queue goes on with ``dependentsToFail``.
    var dependentFailuresDue = false
    /// Waiting jobs whose start time came could not be queued (the store refused): queue them
    /// when it takes writes again. The wake-up timer looks only at starts still to come, so
    /// without this they would wait until the next one, or a restart.
    var dueJobsUnqueued = false
    var storageRetryTimer: (any DispatchSourceTimer)?
    var storageRetryDelay: Duration = Scheduler.storageRetryBase
    var storageRetryQueued = false
    /// Set while the state file system is short of space (``noteFullStore()``), when its free
    /// space was last looked at: the WAL is kept small until it has room again.
    var shortOfSpaceCheckedAt: ContinuousClock.Instant?
    var shutdownCompletion: (@Sendable () -> Void)?
    /// Tears the running jobs down when the drain time of a shutdown is over.
    var drainTimer: (any DispatchSourceTimer)?

    /// Creates a scheduler over a store.
    /// - Parameters:
    ///   - store: the job store; from now on the actor's alone.
    ///   - configuration: default concurrency, log directory, teardown grace, retries, retention.
    ///   - containment: how job processes are contained (``Containment/setUp(mode:stateDirectory:)``);
    ///     `nil`: the process-group fallback.
    public init(store: JobStore, configuration: Configuration, containment: Containment? = nil) {
        self.store = store
        self.configuration = configuration
        self.containment = containment ?? .processGroupOnly(stateDirectory: configuration.stateDirectory)
        let executor = DispatchQueueExecutor(label: "orchd.control")
        self.executor = executor
        requestExecutor = QueueTaskExecutor(queue: executor.queue)
        let localExecutor = LocalExecutor(containment: self.containment, callbackQueue: executor.queue)
        self.localExecutor = localExecutor
        let groupCommit = GroupCommit(database: store.database, queue: executor.queue, policy: configuration.sync)
        self.groupCommit = groupCommit
        self.eventLog = EventLog(database: store.database)
        self.logDirectory = configuration.logDirectory
        self.runsJobsAsSubmitter = configuration.runJobsAsSubmitter
        // Weak: a barrier in flight may finish after the scheduler is gone.
        groupCommit.reenter = { [weak self] work in self?.assumeIsolated { work($0.groupCommit) } }
        // Launches go on after a shortage of orchd's own: start what waits in local queues.
        localExecutor.availabilityChanged = { [weak self] in
            self?.assumeIsolated { scheduler in
                for runner in scheduler.runners.values where runner.settings.executor.kind == .local { scheduler.feed(runner) }
            }
        }
    }

    /// Runs `body` isolated to the scheduler in a later turn of the control queue, unless the
    /// scheduler is gone by then.
    nonisolated func later(_ body: @escaping @Sendable (isolated Scheduler) -> Void) {
        controlQueue.async { [weak self] in self?.assumeIsolated { body($0) } }
    }

    /// A timer on the control queue whose handler runs isolated to the scheduler (unless the
    /// scheduler is gone); scheduled and activated by the caller.
    nonisolated func makeTimer(_ handler: @escaping @Sendable (isolated Scheduler) -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: controlQueue)
        timer.setEventHandler { [weak self] in self?.assumeIsolated { handler($0) } }
        return timer
    }

    // MARK: - Life

    /// Recovers jobs a previous daemon left running, loads the queues, and starts their work.
    /// - Returns: the number of recovered jobs.
    /// - Throws: the store error that stopped start-up.
    public func start() throws -> Int {
        // Weak: a barrier in flight may finish after the scheduler is gone.
        groupCommit.barrierStarting = { [weak self] in
            self?.assumeIsolated { try? $0.eventLog.lastSeq() } ?? nil
        }
        groupCommit.afterBarrier = { [weak self] durableThrough in
            self?.assumeIsolated { $0.deliverEvents(through: durableThrough) }
            MemoryTrimmer.shared.trimSoon()
        }
        groupCommit.syncFailed = { [durabilityLost = configuration.durabilityLost] message in durabilityLost(message) }
        // Events written before this start are history, not news for observers.
        lastDeliveredSeq = try eventLog.lastSeq()
        try eventLog.prune(keep: configuration.eventRetention)
        // Exact, whatever retention an earlier daemon had: a resumed stream is told of a gap.
        eventLogTrimmedThrough = try eventLog.oldestSeq().map { $0 - 1 } ?? lastDeliveredSeq
        // The queues first: recovery retries interrupted jobs by their queue's backoff.
        for settings in try store.queueSettings() {
            runners[settings.name] = QueueRunner(
                settings: settings, defaultConcurrency: configuration.concurrency,
                defaultMaxRunningPerUser: configuration.maxRunningPerUser)
        }
        do {
            heldEnds = try HeldEndJournal(stateDirectory: configuration.stateDirectory)
        } catch {
            DaemonLog.warning(
                "\(error); the job ends the previous daemon kept there are not read (their jobs are recovered as interrupted), and a job end the database refuses is kept in memory only")
        }
        let recovered = try recoverInterruptedJobs()
        for (name, counts) in try store.countsByQueue() {
            runner(for: name).counts = counts
        }
        countsLoaded = true
        // A queue whose last live jobs were the ones recovered (and not retried) drained then.
        for name in Set(recovered) { noteDrainIfEmpty(runner(for: name), hadLiveJobs: true) }
        reattachSlurmJobs()
        try settleWaitingDependents()
        let now = Date()
        _ = try promoteDueJobs(dueBy: now)
        for runner in runners.values { feed(runner) }
        scheduleWakeUp(after: now)
        trimToRetentionCount()
        scheduleAgeRetention()
        // From here on a request's write, too, waits only briefly for another process's lock
        // (start-up waited the full 5 s): a request blocked on the control queue held every
        // job's end queued behind it, in neither file, and a kill -9 then ran the job again.
        // orchctl waits for the lock itself, by calling again (DatabaseLocked).
        store.database.setBusyTimeout(Self.backgroundBusyTimeout)
        return recovered.count
    }

    /// Stops starting jobs, lets the running ones finish for up to `drainTimeout`, then tears
    /// down what still runs; each torn-down job is retried on the next start when it has
    /// attempts left, else recorded as `interrupted`. Jobs not yet started stay queued.
    /// - Parameters:
    ///   - drainTimeout: how long running jobs may go on finishing by themselves (zero: tear
    ///     down at once).
    /// - Returns: once every operation has ended.
    public func shutdown(drainTimeout: Duration = .zero) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            isStopping = true
            shutdownCompletion = { done.resume() }
            wakeUpTimer?.cancel()
            ageRetentionTimer?.cancel()
            // Slurm jobs go on without orchd: detached at once, re-attached at the next start.
            for operation in operations.values where operation.outlivesDaemon {
                operation.stop(reason: .shutdown)
            }
            if drainTimeout > .zero && operations.values.contains(where: { !$0.outlivesDaemon }) {
                DaemonLog.info("draining: \(operations.count) running job\(operations.count == 1 ? "" : "s") may finish for up to \(TimeSpan.format(drainTimeout))")
                let timer = makeTimer { $0.tearDownRunningJobs() }
                timer.schedule(deadline: .now() + drainTimeout.dispatchInterval)
                drainTimer = timer
                timer.activate()
            } else {
                tearDownRunningJobs()
            }
            finishShutdownIfIdle()
        }
    }

    /// Blocks the control queue for ever (`--test-block-control-queue-on-sigusr1`), so that
    /// tests can see the watchdog withhold its pings.
    public func blockForTests() {
        DispatchSemaphore(value: 0).wait()
    }

    private func tearDownRunningJobs() {
        for operation in operations.values {
            operation.stop(reason: .shutdown)
        }
    }

    /// Makes every committed change durable and delivers the pending events.
    public func flush() {
        groupCommit.flush()
    }

    /// Returns once every call being handled (``unansweredRequests``) has handed its reply to
    /// its connection, so that closing the connections after it loses none; at most `timeout`
    /// later, with a warning. Calls that arrive from now on are refused (`Stopping`) unchanged.
    ///
    /// Call it after ``shutdown(drainTimeout:)`` and ``flush()``: from then on no submit
    /// stores anything, and every stored one is durable, so each reply is on its way.
    public nonisolated func requestRepliesHandedOver(timeout: Duration = .seconds(5)) async {
        if await !unansweredRequests.closeAndWait(timeout: timeout) {
            DaemonLog.warning("\(unansweredRequests.count) request(s) still unanswered \(TimeSpan.format(timeout)) after the stop began; closing their connections")
        }
    }

    /// At a clean stop, after the last change: moves the WAL into the database file and
    /// truncates it, so a stopped daemon leaves no WAL of up to 4 MiB behind. Durability does
    /// not depend on it; a failure only leaves the WAL for the next start to replay.
    public func checkpointAtStop() {
        do {
            // Short: only a barrier in flight or the background integrity check can hold it up.
            if try !store.database.checkpointTruncatingLog(waitingAtMost: .seconds(1)) {
                DaemonLog.info("the database's WAL is in use by another connection: left for the next start")
            }
        } catch {
            DaemonLog.warning("cannot checkpoint the database at stop: \(error)")
        }
        // The checkpoint's fsync failed: the WAL holds the only good copy, and closing would
        // checkpoint again and delete it once a second fsync succeeds. Ends here, as a crash.
        if let failure = store.database.checkpointSyncFailure {
            let message = "cannot sync the job database to disk: \(failure.message)"
            DaemonLog.error(message)
            configuration.durabilityLost(message)
        }
    }

    /// Applies new settings (a reload): the teardown grace for jobs torn down from now on, the
    /// concurrency of every queue that sets none of its own, and the retention limits. Running
    /// jobs go on; a lower concurrency only stops new starts until enough jobs have finished. A
    /// lower retention limit is held at once: the finished jobs and events past it are pruned
    /// as the limits' own trims prune them (a page per turn, never a job a live one depends on).
    /// - Parameters:
    ///   - concurrency: jobs run at once per queue, at least 1.
    ///   - teardownGrace: time between SIGTERM and SIGKILL.
    ///   - maxRunningPerUser: the per-user limit of queues that set none (`nil`: none).
    ///   - retentionAge: how long a finished job is kept (`nil`: no age limit).
    ///   - retentionCount: how many finished jobs are kept (`nil`: no count limit).
    ///   - eventRetention: how many events the event log keeps.
    public func reconfigure(
        concurrency: Int, teardownGrace: Duration, maxRunningPerUser: Int?,
        retentionAge: Duration?, retentionCount: Int?, eventRetention: Int
    ) {
        configuration.concurrency = max(1, concurrency)
        configuration.teardownGrace = teardownGrace
        configuration.maxRunningPerUser = maxRunningPerUser
        for runner in runners.values {
            if runner.settings.concurrency == nil { runner.concurrency = configuration.concurrency }
            if runner.settings.maxRunningPerUser == nil { runner.maxRunningPerUser = maxRunningPerUser }
            feed(runner)
        }
        let ageChanged = configuration.retentionAge != retentionAge
        configuration.retentionAge = retentionAge
        configuration.retentionCount = retentionCount
        configuration.eventRetention = eventRetention
        if ageChanged {
            // The armed timer stands for the old age: its deadline and its cutoff both.
            ageRetentionTimer?.cancel()
            ageRetentionTimer = nil
            ageRetentionAt = nil
            scheduleAgeRetention()
        }
        trimToRetentionCount()
        trimEventLog()
    }

    /// How many jobs are in each state, over all queues.
    var totalCounts: JobCounts {
        runners.values.reduce(into: JobCounts()) { total, runner in
            total.waiting += runner.counts.waiting
            total.queued += runner.counts.queued
            total.running += runner.counts.running
            total.finished += runner.counts.finished
        }
    }

    /// The one-line status systemd shows: "2 running, 5 queued, 10 finished".
    public var statusLine: String {
        let counts = totalCounts
        var parts = ["\(counts.running) running", "\(counts.queued) queued"]
        if counts.waiting > 0 { parts.append("\(counts.waiting) waiting") }
        parts.append("\(counts.finished) finished")
        return parts.joined(separator: ", ")
    }

    /// The path of one attempt's captured output: `<log dir>/<owner uid>/<id>.<attempt>.out`
    /// (or `.err`). Each attempt keeps its own files, so a retry never overwrites the output
    /// of the attempt before it; each owner's logs are in a directory of their own, theirs and
    /// mode 0700 under the system service, so that no other user can list or read them.
    /// - Parameters:
    ///   - id: the job.
    ///   - owner: the job's owner (``Job/submitterUid``).
    ///   - attempt: the attempt, from 1.
    ///   - stream: stdout (`.out`) or stderr (`.err`).
    public nonisolated func logPath(of id: JobID, owner: UInt32, attempt: Int, stream: JobsInterface.LogStream) -> String {
        "\(logDirectory)/\(owner)/\(id).\(attempt).\(stream == .stdout ? "out" : "err")"
    }

    /// Where orchd kept a job's output before logs had a directory per owner and a file per
    /// attempt: `<log dir>/<id>.out`/`.err`, which held the last attempt run then. Read when an
    /// attempt has no file of its own, and removed with the job.
    public nonisolated func legacyLogPath(of id: JobID, stream: JobsInterface.LogStream) -> String {
        "\(logDirectory)/\(id).\(stream == .stdout ? "out" : "err")"
    }

    /// The file that holds one attempt's output: its own file, or for the attempt an older
    /// orchd ran last (its files written before the upgrade), the job's one legacy file.
    ///
    /// The legacy file belongs to the attempt just before the first attempt that has files
    /// of its own (or to the job's latest attempt when none has): every attempt run since
    /// the upgrade created its files before its process was spawned.
    /// - Parameters:
    ///   - job: the job as stored.
    ///   - attempt: the attempt, from 1.
    ///   - stream: which output.
    /// - Returns: the path; the file may not exist (not started yet, or deleted).
    nonisolated func logFile(of job: Job, attempt: Int, stream: JobsInterface.LogStream) -> String {
        let own = logPath(of: job.id, owner: job.submitterUid, attempt: attempt, stream: stream)
        if access(own, F_OK) == 0 { return own }
        let legacy = legacyLogPath(of: job.id, stream: stream)
        guard access(legacy, F_OK) == 0 else { return own }
        let firstWithFiles = (1...max(1, job.attempt)).first { candidate in
            access(logPath(of: job.id, owner: job.submitterUid, attempt: candidate, stream: .stdout), F_OK) == 0
                || access(logPath(of: job.id, owner: job.submitterUid, attempt: candidate, stream: .stderr), F_OK) == 0
        }
        let legacyAttempt = firstWithFiles.map { $0 - 1 } ?? job.attempt
        return attempt == legacyAttempt ? legacy : own
    }

    /// Deletes every log file of a job: each attempt's, and the legacy pair.
    /// - Parameters:
    ///   - id: the job.
    ///   - owner: the job's owner.
    ///   - attempts: how many attempts it started.
    nonisolated func removeLogs(of id: JobID, owner: UInt32, attempts: Int) {
        for attempt in stride(from: 1, through: attempts, by: 1) {
            unlink(logPath(of: id, owner: owner, attempt: attempt, stream: .stdout))
            unlink(logPath(of: id, owner: owner, attempt: attempt, stream: .stderr))
        }
        unlink(legacyLogPath(of: id, stream: .stdout))
        unlink(legacyLogPath(of: id, stream: .stderr))
    }

    // MARK: - Feeding queues

    /// The executor that runs a queue's attempts: local, or the queue's Slurm executor.
    func executor(for runner: QueueRunner) -> any JobExecutor {
        switch runner.settings.executor.kind {
        case .local: return localExecutor
        case .slurm: return slurmExecutor(for: runner.name, settings: runner.settings.executor)
        }
    }

    /// A queue's Slurm executor, made on first use.
    func slurmExecutor(for name: QueueName, settings: QueueExecutorSettings) -> SlurmExecutor {
        if let existing = slurmExecutors[name] { return existing }
        let created = SlurmExecutor(
            name: name, settings: settings, stateDirectory: configuration.stateDirectory, reaper: commandReaper,
            callbackQueue: controlQueue)
        // Slurm answers again: start what waits.
        created.availabilityChanged = { [weak self] in self?.assumeIsolated { $0.runners[name].map($0.feed) } }
        slurmExecutors[name] = created
        return created
    }

    /// The runner of a queue; one made here (for the counts of a queue's jobs when the queue
    /// is not declared, say removed with finished jobs left) is not declared.
    func runner(for name: QueueName) -> QueueRunner {
        if let runner = runners[name] { return runner }
        let runner = QueueRunner(
            settings: QueueSettings(name: name), defaultConcurrency: configuration.concurrency,
            defaultMaxRunningPerUser: configuration.maxRunningPerUser)
        runner.isDeclared = false
        runners[name] = runner
        return runner
    }

    /// The declared queue of this name.
    /// - Throws: ``SchedulerError/unknownQueue(_:known:)`` naming the declared queues.
    func declaredRunner(_ name: QueueName) throws(SchedulerError) -> QueueRunner {
        guard let runner = runners[name], runner.isDeclared else {
            throw unknownQueue(name)
        }
        return runner
    }

    /// `unknownQueue` for `name`, naming the declared queues.
    private func unknownQueue(_ name: QueueName, asFilter: Bool = false) -> SchedulerError {
        .unknownQueue(name, known: runners.values.filter(\.isDeclared).map(\.name).sorted(), asFilter: asFilter)
    }

    /// Refuses a filter naming a queue orchd does not know (neither declared nor holding
    /// finished jobs), as a listing does: a typo in `cancel --queue` must not read as
    /// "nothing matched".
    /// - Throws: `unknownQueue` with the declared queues.
    func requireKnownQueue(_ name: QueueName?) throws(SchedulerError) {
        guard let name, runners[name] == nil else { return }
        throw unknownQueue(name, asFilter: true)
    }

    /// Claims the queue's next eligible jobs, up to its free slots, in one transaction, and
    /// hands them to its OperationQueue. Claims go no further than the free slots because a
    /// claim is committed as `running`: a job waiting inside the OperationQueue would be shown,
    /// counted and recovered as running (the OperationQueue's own limit is kept equal).
    ///
    /// When several users have queued jobs, or a per-user limit applies, the free slots go to
    /// the users in turn (``QueueRunner/chooseRoundRobin(_:slots:)``); with one user and no limit,
    /// the queue's next jobs are claimed directly, in priority order.
    func feed(_ runner: QueueRunner) {
        let jobs: [Job]
        do {
            jobs = try backgroundWrite { () throws in try claimForStart(runner) }
        } catch {
            DaemonLog.error("cannot claim jobs of queue \(runner.name) for a start: \(error)")
            // Fed again when the store takes writes again.
            scheduleStorageRetry()
            return
        }
        start(jobs, in: runner)
    }

    /// Claims the jobs ``feed(_:)`` starts, without starting them: a caller that writes in
    /// the same transaction (``writeReaped()``, a submit's insert) starts them once it
    /// committed.
    /// - Parameter queuedUncounted: whether the transaction queued jobs in this queue that
    ///   its counts do not hold yet (they are counted once it committed).
    /// - Returns: the claimed jobs, `running`; none when the queue has no free slot, nothing
    ///   queued, or its executor is unavailable.
    /// - Throws: what the store throws; then nothing was claimed.
    func claimForStart(_ runner: QueueRunner, queuedUncounted: Bool = false) throws -> [Job] {
        guard !isStopping, startsHeldByCancels == 0, runner.freeSlots > 0, queuedUncounted || runner.counts.queued > 0,
            executor(for: runner).isAvailable
        else { return [] }
        var context = JobStateMachine.Context(now: Date())
        context.queuePaused = runner.settings.paused
        let admit = { (_: JobID) in JobStateMachine.decide(.queued, .claim, context) == .enter(.running) }
        // While orchd is short of descriptors, no more local launches than they allow.
        let local = runner.settings.executor.kind == .local
        let slots = local ? min(runner.freeSlots, localExecutor.launchAllowance) : runner.freeSlots
        let jobs: [Job]
        if runner.maxRunningPerUser == nil, try store.queuedOwners(in: runner.name, limit: 2).count < 2 {
            jobs = try store.claimNext(in: runner.name, excluding: runner.inFlight, limit: slots, at: context.now, admit: admit)
        } else {
            jobs = try store.claimShared(
                in: runner.name, excluding: runner.inFlight, perOwner: slots, at: context.now,
                choose: { runner.chooseRoundRobin($0, slots: slots) }, admit: admit)
        }
        if local { localExecutor.claimed(jobs.count) }
        return jobs
    }

    /// Counts claimed jobs as running and launches them; they must be committed.
    func start(_ jobs: [Job], in runner: QueueRunner) {
        for job in jobs {
            if !retriesCancelled.isEmpty { retriesCancelled.remove(job.id) }
            changed(job, from: .queued)
            launch(job, in: runner)
        }
    }

    /// Starts a claimed job's attempt on its queue's executor.
    private func launch(_ job: Job, in runner: QueueRunner) {
        let request = launchRequest(for: job)
        let executor = executor(for: runner)
        do {
            try executor.prepare(job, in: store)
        } catch {
            DaemonLog.error("cannot record the start of job \(job.id): \(error)")
        }
        let id = job.id
        let queue = runner.name
        let launch = ExecutorLaunch(
            job: job, request: request, operationQueue: runner.operationQueue, teardownGrace: configuration.teardownGrace,
            // Told only when no stop was under way at the main process's exit: its result is
            // the attempt's, also over a cancel stored a moment before.
            onResultKnown: { [weak self] result in self?.assumeIsolated { $0.noteEnding(id, result, replacing: true) } })
        operations[id] = executor.launch(
            launch,
            // Called on the control queue.
            onStarted: { [weak self] outcome in self?.assumeIsolated { $0.operationStarted(id, outcome) } },
            onEnd: { [weak self] end in self?.assumeIsolated { $0.operationFinished(id, in: queue, end: end) } })
        runningJobs[id] = job
        runner.inFlight.insert(id)
        runner.noteRunning(job.submitterUid, 1)
        runner.lastServedOwner = job.submitterUid
        // A Slurm attempt's timeout counts from here, not from sbatch's answer: sbatch may
        // wait long for a controller, and the stop then kills it (a local spawn is at once).
        if runner.settings.executor.kind == .slurm, let timeout = job.spec.timeoutUSec, timeoutTimers[id] == nil {
            armTimeout(for: id, after: Duration(microseconds: timeout))
        }
    }

    /// What an attempt of `job` runs: its command, directory, environment and log files.
    func launchRequest(for job: Job) -> LaunchRequest {
        var environment = job.spec.environment
        // Tells the job who it is, and lets recovery find its processes should the daemon die
        // before it recorded their pid.
        environment[ProcessIdentity.jobVariable] = job.id.description
        environment[ProcessIdentity.stateDirectoryVariable] = configuration.stateDirectory
        return LaunchRequest(
            arguments: job.spec.command.processArguments,
            workingDirectory: job.spec.cwd,
            environment: JobSpec.removingSupervisorVariables(environment),
            standardOutputPath: logPath(of: job.id, owner: job.submitterUid, attempt: job.attempt, stream: .stdout),
            standardErrorPath: logPath(of: job.id, owner: job.submitterUid, attempt: job.attempt, stream: .stderr),
            // Root's own jobs, and every job of a daemon that is not root, keep its identity.
            user: configuration.runJobsAsSubmitter && job.submitterUid != 0 ? job.submitterUid : nil)
    }

    func operationStarted(_ id: JobID, _ outcome: Result<ExecutorStart, LaunchError>) {
        guard case .success(let start) = outcome else { return }
        switch start {
        case .process(let process):
            // Written with the other starts and ends of this turn.
            noteStarted(JobStore.ProcessRecord(
                id: id, pid: process.pid, processStartTicks: process.processStartTicks, bootID: process.bootID))
            runningJobs[id]?.pid = process.pid
        case .slurmJob(let slurmJobID):
            // Written at once: a restart finds the attempt in Slurm by this ID.
            do {
                try store.recordSlurmJob(id, slurmJobID: slurmJobID)
                // Its `started` event, delivered once a barrier covers it.
                groupCommit.changed()
            } catch {
                DaemonLog.error("cannot record the Slurm job of job \(id): \(error)")
            }
            runningJobs[id]?.slurmJobId = slurmJobID
        }
        startedJobs.insert(id)
        if let timeout = runningJobs[id]?.spec.timeoutUSec, timeoutTimers[id] == nil {
            // A re-attached attempt has had part of its time already.
            let elapsed = runningJobs[id]?.startedAt.map { Duration.seconds(max(0, Date().timeIntervalSince($0))) } ?? .zero
            armTimeout(for: id, after: max(.zero, Duration(microseconds: timeout) - elapsed))
        }
    }

    func operationFinished(_ id: JobID, in queue: QueueName, end: ExecutorEnd) {
        operations[id] = nil
        timeoutTimers.removeValue(forKey: id)?.cancel()
        let result: JobResult
        var endedAt = Date()
        switch end {
        case .finished(let ended, let at):
            result = ended
            // Never before the claim (a clock stepped back) nor after now.
            if let at { endedAt = min(endedAt, runningJobs[id]?.startedAt.map { max(at, $0) } ?? at) }
        case .detached:
            // Goes on in Slurm; recorded running for the next start to re-attach.
            freeSlot(of: id, in: queue)
            startedJobs.remove(id)
            runningJobs[id] = nil
            finishShutdownIfIdle()
            return
        case .released(let reason):
            startedJobs.remove(id)
            if (try? decide(.releaseClaim, for: existingJob(id))) == .enter(.queued) {
                freeSlot(of: id, in: queue)
                runningJobs[id] = nil
                DaemonLog.warning("job \(id) goes back to its queue: \(reason)")
                do {
                    changed(try store.releaseClaim(id), from: .running)
                } catch {
                    DaemonLog.error("cannot give back the claim on job \(id): \(error)")
                }
                finishShutdownIfIdle()
                return
            }
            result = .spawnFailed(reason: reason)
        }
        // Claimed but never spawned while the daemon stops: queued again for the next daemon.
        let releases = isStopping && (try? decide(.releaseClaim, for: existingJob(id))) == .enter(.queued)
        startedJobs.remove(id)
        guard releases else {
            // Written with the other ends of this turn; the queue is fed then. The slot stays
            // taken until then (``writeReaped()``).
            noteEnded(ReapedEnd(id: id, queue: queue, result: result, endedAt: endedAt))
            return
        }
        freeSlot(of: id, in: queue)
        runningJobs[id] = nil
        do {
            let job = try store.releaseClaim(id)
            changed(job, from: .running)
        } catch {
            DaemonLog.error("cannot give back the claim on job \(id): \(error)")
        }
        if let runner = runners[queue] { feed(runner) }
        finishShutdownIfIdle()
    }

    private func armTimeout(for id: JobID, after limit: Duration) {
        let timer = makeTimer { scheduler in
            scheduler.timeoutTimers[id] = nil
            guard let job = scheduler.storedJob(id), case .stop(let reason)? = try? scheduler.decide(.timeOut, for: job) else { return }
            scheduler.noteEnding(id, reason.jobResult)
            scheduler.operations[id]?.stop(reason: reason)
        }
        timer.schedule(deadline: .now() + limit.dispatchInterval)
        timeoutTimers[id] = timer
        timer.activate()
    }

    // MARK: - Recording ends

    /// Records the end of a running attempt (``JobStateMachine/Operation/endAttempt(_:)``): a
    /// retry when the result allows one and attempts remain, else the job's end.
    /// - Parameter endedAt: when the attempt ended (earlier than now when the end was kept
    ///   while the store refused writes).
    func attemptEnded(_ id: JobID, result: JobResult, at endedAt: Date = Date()) throws(SchedulerError) {
        // The row as this daemon last wrote it, while its operation runs: nothing else writes it.
        let job: Job
        if let running = runningJobs[id] { job = running } else { job = try existingJob(id) }
        let outcome = try decide(.endAttempt(result), for: job, now: endedAt)
        switch outcome {
        case .retryLater(let retryAt):
            let waiting = try storeCall { try store.markRetrying(id, result: result, retryAt: retryAt, at: endedAt) }
            // At debug level: the `retrying` event's own line ("attempt 1 ended: failed(1); will
            // retry") says it at info, in order with the job's other events, once durable.
            DaemonLog.debug("job \(id) attempt \(job.attempt)/\(job.maxAttempts) ended \(result.name); retrying at \(Timestamp.format(retryAt))")
            changed(waiting, from: job.state)
            scheduleWakeUp(written: retryAt)
        case .enter(.finished(let final)):
            try record(job, finishedAs: final, at: endedAt)
        default:
            throw .invalidTransition(id, state: job.state.name, operation: "ending an attempt")
        }
    }

    /// Commits a job's end (``JobStateMachine`` decided it), updates counters, tells
    /// observers and waiters, and settles the waiting jobs that depend on it: queued when it
    /// succeeded and nothing else holds them back, `dependencyFailed` when it did not succeed.
    func record(_ previous: Job, finishedAs result: JobResult, at finishedAt: Date = Date()) throws(SchedulerError) {
        let job = try storeCall { try store.markFinished(previous.id, result: result, at: finishedAt) }
        try finished(previous, as: job)
    }

    /// Everything after a job's end is committed: counters, waiters, dependents, retention.
    /// - Parameters:
    ///   - previous: the job before its end.
    ///   - job: the job as now stored (finished).
    func finished(_ previous: Job, as job: Job) throws(SchedulerError) {
        let id = job.id
        if !retriesCancelled.isEmpty { retriesCancelled.remove(id) }
        changed(job, from: previous.state)
        for request in waiters.removeValue(forKey: id) ?? [] {
            request.remaining.remove(id)
            request.finished[id] = job
            if request.remaining.isEmpty { answer(request) }
        }
        // Only waiting jobs depend on unfinished ones: none waiting, no dependent to settle
        // (known once the counts are loaded; recovery at start-up runs before).
        guard !countsLoaded || totalCounts.waiting > 0 else {
            finishedForRetention(job)
            return
        }
        do throws(SchedulerError) {
            if case .finished(.succeeded) = job.state {
                _ = try storeCall { try promoteEligible(store.waitingDependents(of: id), now: Date()) }
                scheduleWakeUp()
            } else {
                let dependents = try storeCall { try store.waitingDependents(of: id) }
                dependentsToFail += dependents.reversed().map { (dependent: $0.id, dependency: id) }
                try failDependents()
            }
        } catch {
            guard error.isStoreRefusal else { throw error }
            // The end is committed; its dependents are settled once the store takes writes
            // again (``settleWaitingDependents()``), or at the next start.
            DaemonLog.error("cannot settle the jobs that wait for job \(id) now: \(error); trying again once the database takes writes")
            dependentsUnsettled = true
            scheduleStorageRetry()
        }
        finishedForRetention(job)
    }

    /// Fails the jobs in ``dependentsToFail``, in the order a depth-first walk of the
    /// dependency graph meets them (the dependents of each failed job before its siblings), by
    /// a loop: a job failed here comes back through ``finished(_:as:)``, which adds its own
    /// dependents and returns to this loop. Calling itself once per link, as it did, overflowed
    /// the stack at a chain of about 2,000 `--after` links, and again at each start after.
    ///
    /// At most ``jobsPerTurn`` a turn, as a cancel of many does: the rest go on in a later turn
    /// of the control queue (``failDependentsLater()``), so that a failure with 20,000 jobs
    /// waiting on it does not hold every other call for seconds. Once orchd is stopping, the
    /// rest is done without pause.
    /// - Throws: what failing one throws; the rest are then left waiting, for
    ///   ``settleWaitingDependents()`` once the store takes writes again, or the next start.
    private func failDependents() throws(SchedulerError) {
        guard !isFailingDependents else { return }
        isFailingDependents = true
        defer { isFailingDependents = false }
        var failedThisTurn = 0
        // Whether each dependency met this turn still stands unsuccessful: it may have been
        // retried between turns, never within one, so it is read once a turn, not per dependent.
        var stillFailed: [JobID: Bool] = [:]
        while let next = dependentsToFail.popLast() {
            if failedThisTurn == Self.jobsPerTurn && !isStopping {
                dependentsToFail.append(next)
                return failDependentsLater()
            }
            do throws(SchedulerError) {
                if stillFailed[next.dependency] == nil {
                    // Gone (pruned) counts as failed, as a dependency that is gone does.
                    stillFailed[next.dependency] = try storeCall { try store.finishedUnsuccessfully(next.dependency) } != false
                }
                if stillFailed[next.dependency] == true { try failDependent(next.dependent, of: next.dependency) }
            } catch {
                dependentsToFail.removeAll()
                throw error
            }
            failedThisTurn += 1
        }
    }

    /// Goes on with ``dependentsToFail`` in a later turn of the control queue.
    private func failDependentsLater() {
        guard !dependentFailuresDue else { return }
        dependentFailuresDue = true
        later { scheduler in
            scheduler.dependentFailuresDue = false
            do throws(SchedulerError) {
                try scheduler.failDependents()
            } catch where error.isStoreRefusal {
                DaemonLog.error("cannot fail the jobs that wait for a job that did not succeed now: \(error); trying again once the database takes writes")
                scheduler.dependentsUnsettled = true
                scheduler.scheduleStorageRetry()
            } catch {
                DaemonLog.error("cannot fail the jobs that wait for a job that did not succeed: \(error); they are settled at the next start")
            }
        }
    }

    /// Fails a waiting job whose dependency `dependency` did not succeed (or is gone). The
    /// caller has checked that the dependency was not retried meanwhile (between turns of
    /// ``failDependents()``): such a dependent waits for the next attempt, or, when that
    /// attempt has succeeded, for whatever else holds it back.
    private func failDependent(_ dependent: JobID, of dependency: JobID) throws(SchedulerError) {
        // Read again: failing an earlier dependent may have failed this one too.
        let current = try existingJob(dependent)
        if case .enter(.finished(let failed)) = try decide(.failDependency(dependency), for: current) {
            try record(current, finishedAs: failed)
        }
    }

    /// Settles the waiting jobs whose dependencies have all finished but that are still
    /// waiting, because the store refused the write when their last dependency ended (or the
    /// daemon stopped in between): queued when every dependency succeeded (and their start
    /// time has come), failed with `dependency_failed` naming the first that did not, or that
    /// is gone. Runs at start and when the store takes writes again.
    /// - Throws: what the store throws; what was settled before stays settled.
    func settleWaitingDependents() throws(SchedulerError) {
        let candidates = try storeCall { try store.waitingJobsWithFinishedDependencies() }
        guard !candidates.isEmpty else { return }
        let unsucceeded = try storeCall { try store.unsucceededDependencies(of: candidates.map(\.id)) }
        var promotable: [Job] = []
        for job in candidates {
            if let first = unsucceeded[job.id]?.first {
                try failDependent(job.id, of: first.id)
            } else {
                promotable.append(job)
            }
        }
        _ = try storeCall { try promoteEligible(promotable, now: Date()) }
        scheduleWakeUp()
    }

    /// Queues the candidates ``JobStateMachine`` finds eligible (start time come, every
    /// dependency succeeded), counts and announces them, and feeds their queues.
    /// - Returns: the jobs now queued.
    @discardableResult
    func promoteEligible(_ candidates: [Job], now: Date) throws -> [Job] {
        guard !candidates.isEmpty else { return [] }
        let unsucceeded = try store.unsucceededDependencies(of: candidates.filter { !$0.spec.after.isEmpty }.map(\.id))
        let eligible = candidates.filter { job in
            let context = JobStateMachine.Context(
                now: now, notBefore: job.spec.notBefore, unsucceededDependencies: unsucceeded[job.id] ?? [])
            return JobStateMachine.decide(job.state, .promote, context) == .enter(.queued)
        }
        let promoted = try store.markQueued(eligible.map(\.id))
        for job in promoted { changed(job, from: .waiting) }
        for name in Set(promoted.map(\.spec.queue)) { feed(runner(for: name)) }
        return promoted
    }

    /// Updates the counters for a committed change and schedules the group commit that makes
    /// it durable; observers hear of it from the event log once it is (``deliverEvents()``).
    func changed(_ job: Job, from previous: JobState?) {
        let runner = runner(for: job.spec.queue)
        let hadLiveJobs = runner.counts.live > 0
        if let previous { runner.counts.add(-1, to: previous) }
        runner.counts.add(1, to: job.state)
        noteDrainIfEmpty(runner, hadLiveJobs: hadLiveJobs)
        groupCommit.changed()
        storageMayHaveRecovered()
        if !attemptWatchers.isEmpty, var watchers = attemptWatchers.removeValue(forKey: job.id) {
            watchers.removeAll { watcher in
                guard Self.isOver(job, attempt: watcher.attempt) else { return false }
                watcher.done(job)
                return true
            }
            if !watchers.isEmpty { attemptWatchers[job.id] = watchers }
        }
    }

    /// Whether a job's attempt is over: the job finished, went past it, or is no longer
    /// running it.
    static func isOver(_ job: Job, attempt: Int) -> Bool {
        job.state.isFinished || job.attempt > attempt || (job.attempt == attempt && job.state != .running)
    }

    /// Gives back the slot a job held in its queue (``QueueRunner/inFlight``). A job that
    /// ended keeps it until its end is written: a claim in between (a submit's, a feed's)
    /// started the next job while the store still showed this one running, and its `started`
    /// event came before this one's `finished`, in sequence and in time, as if the queue had
    /// run one more than its concurrency.
    func freeSlot(of id: JobID, in queue: QueueName) {
        if runners[queue]?.inFlight.remove(id) != nil, let owner = runningJobs[id]?.submitterUid {
            runners[queue]?.noteRunning(owner, -1)
        }
    }

    func finishShutdownIfIdle() {
        guard isStopping, operations.isEmpty, reapedEnds.isEmpty, let completion = shutdownCompletion else { return }
        if !pendingEnds.isEmpty { writeOrAbandonPendingEnds() }
        shutdownCompletion = nil
        completion()
    }

    func existingJob(_ id: JobID) throws(SchedulerError) -> Job {
        let job: Job?
        do {
            job = try store.job(id)
        } catch {
            throw storageError(error)
        }
        guard let job else { throw .noSuchJob(id) }
        return job
    }

    // MARK: - Timers

    /// Queues every waiting job whose start time has come by `now` and whose dependencies
    /// succeeded. A wake-up armed afterwards must look for starts after this same `now`
    /// (``scheduleWakeUp(written:after:)``), not after a later clock reading: a start that
    /// came in between (a retry's backoff of a millisecond, while this transaction ran) was
    /// neither queued here nor looked for there, and its job waited for ever.
    func promoteDueJobs(dueBy now: Date = Date()) throws -> [Job] {
        try promoteEligible(store.waitingJobs(dueBy: now), now: now)
    }

    /// Arms the one wake-up timer for the earliest future start among waiting jobs.
    /// - Parameters:
    ///   - written: a start time the caller has just stored. It counts even when it has
    ///     passed meanwhile (a retry's backoff of a few milliseconds, a busy control queue):
    ///     the store is asked only for starts after `now`, since a waiting job whose start has
    ///     come waits for its dependencies, and such a job would otherwise never be queued.
    ///   - now: starts after this time are looked for in the store: the time due jobs were
    ///     last queued by, when the caller just did (``promoteDueJobs(dueBy:)``).
    func scheduleWakeUp(written: Date? = nil, after now: Date = Date()) {
        // Only waiting jobs have a delayed start; an armed timer stays (see below).
        guard !isStopping, !countsLoaded || totalCounts.waiting > 0 else { return }
        var next: Date?
        do {
            next = try store.nextWakeUp(after: now)
        } catch {
            DaemonLog.error("cannot read the next delayed start: \(error)")
            return
        }
        if let written { next = min(next ?? written, written) }
        // An armed timer is never dropped, only replaced by an earlier one: when it is due
        // but its handler has not run yet (a busy control queue), the start it stands for is
        // no longer "after now", and cancelling it would leave that job waiting for ever.
        guard let next else { return }
        if let wakeUpAt, wakeUpAt <= next, wakeUpTimer != nil { return }
        wakeUpTimer?.cancel()
        let timer = makeTimer { scheduler in
            scheduler.wakeUpTimer = nil
            scheduler.wakeUpAt = nil
            let now = Date()
            do {
                _ = try scheduler.promoteDueJobs(dueBy: now)
            } catch {
                DaemonLog.error("cannot queue delayed jobs: \(error)")
                scheduler.dueJobsUnqueued = true
                scheduler.scheduleStorageRetry()
            }
            scheduler.scheduleWakeUp(after: now)
        }
        // Wall-clock deadline: `--at 08:00` means 08:00 even across a suspend.
        timer.schedule(wallDeadline: .now() + max(0, next.timeIntervalSinceNow) + 0.001)
        wakeUpTimer = timer
        wakeUpAt = next
        timer.activate()
    }
}
