import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

/// Decides which job runs when, and records every change.
///
/// All mutable state is owned by one serial queue, the control queue (seed 000's main
/// thread): public methods hop onto it with their arguments captured and answer through a
/// completion closure, so no caller ever blocks the control queue and the control queue never
/// blocks on an operation (seed 003). Each state change is committed to the store before
/// observers hear of it.
///
/// Work is driven by events only: submissions, operation ends, queue changes, one wake-up
/// timer for the earliest delayed start, and one timeout timer per running job with a limit.
public final class Scheduler: @unchecked Sendable {  // mutable state is confined to controlQueue
    /// Settings the daemon passes in.
    public struct Configuration: Sendable {
        /// Jobs run at once in a queue that sets no concurrency of its own.
        public var concurrency: Int
        /// The daemon's state directory; jobs see it as `$ORCHD_STATE_DIR`.
        public var stateDirectory: String
        /// Where `<id>.out` and `<id>.err` are written.
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

    /// The serial queue that owns the scheduler's state.
    public let controlQueue = DispatchQueue(label: "orchd.control")
    /// Lifecycle observers, called after each committed change.
    public let observers = ObserverSet<any JobObserver>()

    let store: JobStore
    /// Makes committed changes durable in groups, and holds acknowledgements until they are.
    let groupCommit: GroupCommit
    /// The numbered event log, and how far it has been delivered to observers.
    let eventLog: EventLog
    var lastDeliveredSeq: Int64 = 0
    var subscribers: [EventSubscriber] = []
    var drainWaiters: [QueueName: [@Sendable (Result<QueueInfo, SchedulerError>) -> Void]] = [:]
    var configuration: Configuration
    let launcher = ProcessLauncher()
    let reaper = ChildReaper()
    var runners: [QueueName: QueueRunner] = [:]
    /// Operations created and not yet finished, by job.
    var operations: [JobID: JobOperation] = [:]
    /// Jobs whose process was started (recorded running) by this daemon.
    var startedJobs: Set<JobID> = []
    var timeoutTimers: [JobID: any DispatchSourceTimer] = [:]
    var waiters: [JobID: [WaitRequest]] = [:]
    /// The timer for the earliest delayed start, and when it fires.
    var wakeUpTimer: (any DispatchSourceTimer)?
    var wakeUpAt: Date?
    var retentionTimer: (any DispatchSourceTimer)?
    var isStopping = false
    /// Job ends the store refused (full disk, locked database), kept until written
    /// (Scheduler+StorageFaults.swift).
    var pendingEnds: [JobID: PendingEnd] = [:]
    var storageRetryTimer: (any DispatchSourceTimer)?
    var storageRetryDelay: Duration = Scheduler.storageRetryBase
    var storageRetryQueued = false
    var shutdownCompletion: (@Sendable () -> Void)?

    /// Creates a scheduler over a store.
    /// - Parameters:
    ///   - store: the job store; from now on used on the control queue only.
    ///   - configuration: default concurrency, log directory, teardown grace, retries, retention.
    public init(store: JobStore, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
        self.groupCommit = GroupCommit(database: store.database, queue: controlQueue)
        self.eventLog = EventLog(database: store.database)
        // Weak: a barrier in flight may finish after the scheduler is gone.
        groupCommit.afterBarrier = { [weak self] in
            self?.deliverEvents()
            MemoryTrimmer.shared.trimSoon()
        }
    }

    // MARK: - Life

    /// Recovers jobs a previous daemon left running, loads the queues, and starts their work.
    /// - Parameter completion: called on the control queue with the number of recovered jobs,
    ///   or the store error that stopped start-up.
    public func start(completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        controlQueue.async { [self] in
            do {
                // Events written before this start are history, not news for observers.
                lastDeliveredSeq = try eventLog.lastSeq()
                try eventLog.prune(keep: configuration.eventRetention)
                let recovered = try recoverInterruptedJobs()
                for settings in try store.queueSettings() {
                    runners[settings.name] = QueueRunner(settings: settings, defaultConcurrency: configuration.concurrency)
                }
                for (name, counts) in try store.countsByQueue() {
                    runner(for: name).counts = counts
                }
                _ = try promoteDueJobs()
                for runner in runners.values { feed(runner) }
                scheduleWakeUp()
                scheduleRetention()
                completion(.success(recovered))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Stops starting jobs, lets the running ones finish for up to `drainTimeout`, then tears
    /// down what still runs; each torn-down job is retried on the next start when it has
    /// attempts left, else recorded as `interrupted`. Jobs not yet started stay queued.
    /// - Parameters:
    ///   - drainTimeout: how long running jobs may go on finishing by themselves (zero: tear
    ///     down at once).
    ///   - completion: called on the control queue once every operation has ended.
    public func shutdown(drainTimeout: Duration = .zero, completion: @escaping @Sendable () -> Void) {
        controlQueue.async { [self] in
            isStopping = true
            shutdownCompletion = completion
            wakeUpTimer?.cancel()
            retentionTimer?.cancel()
            if drainTimeout > .zero && !operations.isEmpty {
                DaemonLog.info("draining: \(operations.count) running jobs may finish for up to \(TimeSpan.format(drainTimeout))")
                controlQueue.asyncAfter(deadline: .now() + drainTimeout.dispatchInterval) { [self] in
                    tearDownRunningJobs()
                }
            } else {
                tearDownRunningJobs()
            }
            finishShutdownIfIdle()
        }
    }

    private func tearDownRunningJobs() {
        for operation in operations.values {
            operation.stop(reason: .shutdown)
        }
    }

    /// Makes every committed change durable and delivers the pending events, waiting until
    /// done (seed 004: a synchronous wrapper). Refuses (traps) when called on the control queue,
    /// which would deadlock.
    public func flush() {
        dispatchPrecondition(condition: .notOnQueue(controlQueue))
        controlQueue.sync { groupCommit.flush() }
    }

    /// Applies new settings (a reload): the teardown grace for jobs torn down from now on, and
    /// the concurrency of every queue that sets none of its own. Running jobs go on; a lower
    /// concurrency only stops new starts until enough jobs have finished.
    /// - Parameters:
    ///   - concurrency: jobs run at once per queue, at least 1.
    ///   - teardownGrace: time between SIGTERM and SIGKILL.
    public func reconfigure(concurrency: Int, teardownGrace: Duration) {
        controlQueue.async { [self] in
            configuration.concurrency = max(1, concurrency)
            configuration.teardownGrace = teardownGrace
            for runner in runners.values where runner.settings.concurrency == nil {
                runner.concurrency = configuration.concurrency
                feed(runner)
            }
        }
    }

    /// How many jobs are in each state, over all queues. Call on the control queue.
    var totalCounts: JobCounts {
        runners.values.reduce(into: JobCounts()) { total, runner in
            total.waiting += runner.counts.waiting
            total.queued += runner.counts.queued
            total.running += runner.counts.running
            total.finished += runner.counts.finished
        }
    }

    /// The one-line status systemd shows: "2 running, 5 queued, 10 finished".
    /// Call on the control queue.
    public var statusLine: String {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let counts = totalCounts
        var parts = ["\(counts.running) running", "\(counts.queued) queued"]
        if counts.waiting > 0 { parts.append("\(counts.waiting) waiting") }
        parts.append("\(counts.finished) finished")
        return parts.joined(separator: ", ")
    }

    /// The path of a job's captured output.
    /// - Parameters:
    ///   - id: the job.
    ///   - stream: stdout (`<id>.out`) or stderr (`<id>.err`).
    public func logPath(of id: JobID, stream: JobsInterface.LogStream) -> String {
        "\(configuration.logDirectory)/\(id).\(stream == .stdout ? "out" : "err")"
    }

    // MARK: - Feeding queues

    func runner(for name: QueueName) -> QueueRunner {
        if let runner = runners[name] { return runner }
        let runner = QueueRunner(settings: QueueSettings(name: name), defaultConcurrency: configuration.concurrency)
        runners[name] = runner
        return runner
    }

    /// Hands the queue's next eligible jobs to its OperationQueue, up to its free slots.
    func feed(_ runner: QueueRunner) {
        guard !isStopping, runner.freeSlots > 0, runner.counts.queued > 0 else { return }
        let jobs: [Job]
        do {
            jobs = try store.nextQueued(in: runner.name, excluding: runner.inFlight, limit: runner.freeSlots)
        } catch {
            DaemonLog.error("cannot read queue \(runner.name): \(error)")
            return
        }
        for job in jobs {
            launch(job, in: runner)
        }
    }

    private func launch(_ queued: Job, in runner: QueueRunner) {
        let job: Job
        do {
            job = try store.claim(queued.id, at: Date())
        } catch {
            DaemonLog.error("cannot claim job \(queued.id) for a start: \(error)")
            // Fed again when the store takes writes again.
            scheduleStorageRetry()
            return
        }
        changed(job, from: .queued)
        var environment = job.spec.environment
        // Tells the job who it is, and lets recovery find its processes should the daemon die
        // before it recorded their pid.
        environment[ProcessIdentity.jobVariable] = job.id.description
        environment[ProcessIdentity.stateDirectoryVariable] = configuration.stateDirectory
        if let extra = observers.query({ $0.environment(for: job) }) {
            environment.merge(extra) { _, new in new }
        }
        let request = LaunchRequest(
            arguments: job.spec.command.processArguments,
            workingDirectory: job.spec.cwd,
            environment: JobSpec.removingSupervisorVariables(environment),
            standardOutputPath: logPath(of: job.id, stream: .stdout),
            standardErrorPath: logPath(of: job.id, stream: .stderr))
        let id = job.id
        let queue = runner.name
        let operation = JobOperation(
            jobID: id, request: request, launcher: launcher, reaper: reaper,
            teardown: .standard(grace: configuration.teardownGrace), callbackQueue: controlQueue,
            onStarted: { [weak self] outcome in self?.operationStarted(id, outcome) },
            onFinished: { [weak self] result in self?.operationFinished(id, in: queue, result: result) })
        operations[id] = operation
        runner.inFlight.insert(id)
        runner.operationQueue.addOperation(operation)
    }

    private func operationStarted(_ id: JobID, _ outcome: Result<LaunchedProcess, LaunchError>) {
        guard case .success(let process) = outcome else { return }
        do {
            let job = try store.recordProcess(
                id, pid: process.pid, processStartTicks: process.processStartTicks, bootID: process.bootID)
            startedJobs.insert(id)
            if let timeout = job.spec.timeoutUSec {
                armTimeout(for: id, after: .microseconds(timeout))
            }
        } catch {
            DaemonLog.error("cannot record the start of job \(id): \(error)")
        }
    }

    private func operationFinished(_ id: JobID, in queue: QueueName, result: JobResult) {
        operations[id] = nil
        timeoutTimers.removeValue(forKey: id)?.cancel()
        runners[queue]?.inFlight.remove(id)
        let wasStarted = startedJobs.remove(id) != nil
        if isStopping && !wasStarted {
            // Claimed but never spawned: queued again for the next daemon.
            do {
                let job = try store.releaseClaim(id)
                changed(job, from: .running)
            } catch {
                DaemonLog.error("cannot give back the claim on job \(id): \(error)")
            }
        } else {
            recordEnd(id, in: queue, result: result, at: Date())
        }
        if let runner = runners[queue] { feed(runner) }
        finishShutdownIfIdle()
    }

    private func armTimeout(for id: JobID, after limit: Duration) {
        let timer = DispatchSource.makeTimerSource(queue: controlQueue)
        timer.schedule(deadline: .now() + limit.dispatchInterval)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.timeoutTimers[id] = nil
            self.operations[id]?.stop(reason: .timedOut)
        }
        timeoutTimers[id] = timer
        timer.activate()
    }

    // MARK: - Recording ends

    /// Records the end of a running attempt: a retry when the result allows one and attempts
    /// remain, else the job's end.
    /// - Parameter endedAt: when the attempt ended (earlier than now when the end was kept
    ///   while the store refused writes).
    func attemptEnded(_ id: JobID, result: JobResult, at endedAt: Date = Date()) throws(SchedulerError) {
        let job = try existingJob(id)
        if RetryPolicy.isRetryable(result), job.attempt < job.maxAttempts, case .running = job.state {
            let policy = runner(for: job.spec.queue).retryPolicy(default: configuration.retryPolicy)
            let retryAt = endedAt.addingTimeInterval(policy.backoff(afterAttempt: job.attempt).timeInterval)
            let waiting: Job
            do {
                waiting = try store.markRetrying(id, result: result, retryAt: retryAt, at: endedAt)
            } catch {
                throw storageError(error)
            }
            DaemonLog.info("job \(id) attempt \(job.attempt)/\(job.maxAttempts) ended \(result.name); retrying at \(Timestamp.format(retryAt))")
            changed(waiting, from: job.state, attemptResult: result)
            scheduleWakeUp()
        } else {
            try record(id, finishedAs: result, at: endedAt)
        }
    }

    /// Commits a job's end, updates counters, tells observers and waiters, and settles the
    /// jobs that depend on it: queued when it succeeded, `dependencyFailed` when it did not.
    func record(_ id: JobID, finishedAs result: JobResult, at finishedAt: Date = Date()) throws(SchedulerError) {
        let previous = try existingJob(id)
        let job: Job
        do {
            job = try store.markFinished(id, result: result, at: finishedAt)
        } catch {
            throw storageError(error)
        }
        changed(job, from: previous.state)
        for request in waiters.removeValue(forKey: id) ?? [] {
            request.remaining.remove(id)
            if request.remaining.isEmpty { answer(request) }
        }
        if case .succeeded = result {
            do {
                let promoted = try store.promoteWaiting(now: Date(), dependentsOf: id)
                promote(promoted)
            } catch {
                DaemonLog.error("cannot queue the dependents of job \(id): \(error)")
            }
            scheduleWakeUp()
        } else {
            let dependents: [JobID]
            do {
                dependents = try store.waitingDependents(of: id)
            } catch {
                throw storageError(error)
            }
            for dependent in dependents {
                try record(dependent, finishedAs: .dependencyFailed(id))
            }
        }
    }

    /// Counts and announces jobs that just became queued, and feeds their queues.
    func promote(_ jobs: [Job]) {
        for job in jobs { changed(job, from: .waiting) }
        for name in Set(jobs.map(\.spec.queue)) { feed(runner(for: name)) }
    }

    /// Updates the counters for a committed change and tells the observers.
    func changed(_ job: Job, from previous: JobState?, attemptResult: JobResult? = nil) {
        let runner = runner(for: job.spec.queue)
        let hadLiveJobs = runner.counts.live > 0
        if let previous { runner.counts.add(-1, to: previous) }
        runner.counts.add(1, to: job.state)
        noteDrainIfEmpty(runner, hadLiveJobs: hadLiveJobs)
        let result = job.state.result ?? attemptResult
        groupCommit.changed()
        storageMayHaveRecovered()
        observers.notify { $0.job(job, changedFrom: previous, to: job.state, result: result) }
    }

    func finishShutdownIfIdle() {
        guard isStopping, operations.isEmpty, let completion = shutdownCompletion else { return }
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

    /// Queues every waiting job whose start time has come and whose dependencies succeeded.
    func promoteDueJobs() throws -> [Job] {
        let promoted = try store.promoteWaiting(now: Date())
        promote(promoted)
        return promoted
    }

    /// Arms the one wake-up timer for the earliest future start among waiting jobs.
    func scheduleWakeUp() {
        guard !isStopping else { return }
        let next: Date?
        do {
            next = try store.nextWakeUp(after: Date())
        } catch {
            DaemonLog.error("cannot read the next delayed start: \(error)")
            return
        }
        // An armed timer is never dropped, only replaced by an earlier one: when it is due
        // but its handler has not run yet (a busy control queue), the start it stands for is
        // no longer "after now", and cancelling it would leave that job waiting for ever.
        guard let next else { return }
        if let wakeUpAt, wakeUpAt <= next, wakeUpTimer != nil { return }
        wakeUpTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: controlQueue)
        // Wall-clock deadline: `--at 08:00` means 08:00 even across a suspend.
        timer.schedule(wallDeadline: .now() + max(0, next.timeIntervalSinceNow) + 0.001)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.wakeUpTimer = nil
            self.wakeUpAt = nil
            do { _ = try self.promoteDueJobs() } catch { DaemonLog.error("cannot queue delayed jobs: \(error)") }
            self.scheduleWakeUp()
        }
        wakeUpTimer = timer
        wakeUpAt = next
        timer.activate()
    }
}

extension Duration {
    /// The duration in seconds, as `TimeInterval`.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
