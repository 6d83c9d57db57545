import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

/// Decides which job runs when, and records every change.
///
/// All mutable state is owned by one serial queue, the control queue (seed 000's main
/// thread): public methods hop onto it with their arguments captured and answer through a
/// completion closure, so no caller ever blocks the control queue and the control queue never
/// blocks on an operation (seed 003). Each state change is one store transaction, committed
/// before observers hear of it.
public final class Scheduler: @unchecked Sendable {  // mutable state is confined to controlQueue
    /// Settings the daemon passes in.
    public struct Configuration: Sendable {
        /// Jobs run at once per queue.
        public var concurrency: Int
        /// Where `<id>.out` and `<id>.err` are written.
        public var logDirectory: String
        /// How long a job gets between SIGTERM and SIGKILL when torn down.
        public var teardownGrace: Duration

        public init(concurrency: Int, logDirectory: String, teardownGrace: Duration) {
            self.concurrency = concurrency
            self.logDirectory = logDirectory
            self.teardownGrace = teardownGrace
        }
    }

    /// The serial queue that owns the scheduler's state.
    public let controlQueue = DispatchQueue(label: "orchd.control")
    /// Lifecycle observers, called after each committed change.
    public let observers = ObserverSet<any JobObserver>()

    private let store: JobStore
    private var configuration: Configuration
    private let launcher = ProcessLauncher()
    private let reaper = ChildReaper()
    private var runners: [QueueName: QueueRunner] = [:]
    /// Operations created and not yet finished, by job.
    private var operations: [JobID: JobOperation] = [:]
    /// Jobs whose process was started (recorded running) by this daemon.
    private var startedJobs: Set<JobID> = []
    private var waiters: [JobID: [WaitRequest]] = [:]
    private var counts = ManagerInterface.JobCounts()
    private var isStopping = false
    private var shutdownCompletion: (@Sendable () -> Void)?

    /// Creates a scheduler over a store.
    /// - Parameters:
    ///   - store: the job store; from now on used on the control queue only.
    ///   - configuration: concurrency, log directory, teardown grace.
    public init(store: JobStore, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
    }

    // MARK: - Life

    /// Recovers jobs a previous daemon left running, then starts every queue's work.
    /// Returns (calls `completion`) once recovery is committed.
    /// - Parameter completion: called on the control queue with the number of recovered jobs,
    ///   or the store error that stopped recovery.
    public func start(completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        controlQueue.async { [self] in
            do {
                let recovered = try recoverInterruptedJobs()
                counts = try store.counts()
                for name in try store.queuesWithQueuedJobs() {
                    feed(runner(for: name))
                }
                completion(.success(recovered))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Stops starting jobs and tears down the running ones; their outcome is recorded as
    /// `interrupted`. Jobs not yet started stay queued for the next start.
    /// - Parameter completion: called on the control queue once every operation has ended.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        controlQueue.async { [self] in
            isStopping = true
            shutdownCompletion = completion
            for operation in operations.values {
                operation.stop(reason: .shutdown)
            }
            finishShutdownIfIdle()
        }
    }

    /// The one-line status systemd shows: "2 running, 5 queued, 10 finished".
    /// Call on the control queue.
    public var statusLine: String {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        var parts = ["\(counts.running) running", "\(counts.queued) queued"]
        if counts.waiting > 0 { parts.append("\(counts.waiting) waiting") }
        parts.append("\(counts.finished) finished")
        return parts.joined(separator: ", ")
    }

    /// Applies new settings (a reload): the teardown grace for jobs torn down from now on, and
    /// the concurrency of every queue. Running jobs go on; a lower concurrency only stops new
    /// starts until enough jobs have finished.
    /// - Parameters:
    ///   - concurrency: jobs run at once per queue, at least 1.
    ///   - teardownGrace: time between SIGTERM and SIGKILL.
    public func reconfigure(concurrency: Int, teardownGrace: Duration) {
        controlQueue.async { [self] in
            configuration.concurrency = max(1, concurrency)
            configuration.teardownGrace = teardownGrace
            for runner in runners.values {
                runner.concurrency = configuration.concurrency
                feed(runner)
            }
        }
    }

    // MARK: - Requests

    /// Stores new jobs, in one transaction, and starts what can start.
    /// - Parameters:
    ///   - specs: the jobs; all are refused if one is invalid.
    ///   - submitterUid: the caller's uid (from `SO_PEERCRED`).
    ///   - completion: the stored jobs, or why nothing was stored.
    public func submit(
        _ specs: [JobSpec], submitterUid: UInt32,
        completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void
    ) {
        for spec in specs {
            do { try spec.validate() } catch {
                completion(.failure(.invalidSpec(error)))
                return
            }
        }
        controlQueue.async { [self] in
            let jobs: [Job]
            do {
                jobs = try store.insert(specs, submitterUid: submitterUid, at: Date())
            } catch {
                completion(.failure(.storage(String(describing: error))))
                return
            }
            counts.queued += jobs.count
            for job in jobs {
                observers.notify { $0.job(job, changedFrom: nil, to: job.state, result: nil) }
            }
            completion(.success(jobs))
            for name in Set(jobs.map(\.spec.queue)) {
                feed(runner(for: name))
            }
        }
    }

    /// Looks up one job.
    public func job(_ id: JobID, completion: @escaping @Sendable (Result<Job, SchedulerError>) -> Void) {
        controlQueue.async { [self] in
            completion(Result { () throws(SchedulerError) -> Job in try existingJob(id) })
        }
    }

    /// Lists jobs matching every filter given, in ID order.
    public func list(
        ids: [JobID]?, queue: QueueName?, stateName: String?,
        completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void
    ) {
        controlQueue.async { [self] in
            do {
                completion(.success(try store.jobs(ids: ids, queue: queue, stateName: stateName, limit: nil)))
            } catch {
                completion(.failure(.storage(String(describing: error))))
            }
        }
    }

    /// Cancels jobs: dequeues those not started, tears down the running ones.
    /// - Parameters:
    ///   - ids: the jobs; nothing is cancelled if one is unknown, finished or not permitted.
    ///   - uid: the caller; root may cancel any job, others only their own.
    ///   - completion: the jobs once all of them have finished as cancelled.
    public func cancel(
        _ ids: [JobID], by uid: UInt32, completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void
    ) {
        controlQueue.async { [self] in
            do throws(SchedulerError) {
                let jobs = try ids.map { id throws(SchedulerError) in try existingJob(id) }
                for job in jobs {
                    if job.state.isFinished { throw .alreadyFinished(job.id) }
                    if uid != 0 && uid != job.submitterUid { throw .notPermitted(job.id) }
                }
                for job in jobs {
                    if let operation = operations[job.id] {
                        operation.stop(reason: .cancelled)
                    } else {
                        try record(job.id, finishedAs: .cancelled)
                    }
                }
                awaitFinish(of: ids, completion: completion)
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Answers once every job in `ids` has finished.
    /// - Parameter completion: the finished jobs, or `noSuchJob` for an unknown ID.
    public func wait(for ids: [JobID], completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void) {
        controlQueue.async { [self] in
            do throws(SchedulerError) {
                for id in ids { _ = try existingJob(id) }
                awaitFinish(of: ids, completion: completion)
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// How many jobs are in each state.
    public func jobCounts(completion: @escaping @Sendable (ManagerInterface.JobCounts) -> Void) {
        controlQueue.async { [self] in completion(counts) }
    }

    /// The path of a job's captured output.
    /// - Parameters:
    ///   - id: the job.
    ///   - stream: stdout (`<id>.out`) or stderr (`<id>.err`).
    public func logPath(of id: JobID, stream: JobsInterface.LogStream) -> String {
        "\(configuration.logDirectory)/\(id).\(stream == .stdout ? "out" : "err")"
    }

    // MARK: - Feeding queues

    private func runner(for name: QueueName) -> QueueRunner {
        if let runner = runners[name] { return runner }
        let runner = QueueRunner(name: name, concurrency: configuration.concurrency)
        runners[name] = runner
        return runner
    }

    /// Hands the queue's next eligible jobs to its OperationQueue, up to its free slots.
    private func feed(_ runner: QueueRunner) {
        guard !isStopping, runner.freeSlots > 0 else { return }
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

    private func launch(_ job: Job, in runner: QueueRunner) {
        var environment = job.spec.environment
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
            let job = try store.markRunning(
                id, pid: process.pid, processStartTicks: process.processStartTicks, bootID: process.bootID, at: Date())
            startedJobs.insert(id)
            counts.queued -= 1
            counts.running += 1
            observers.notify { $0.job(job, changedFrom: .queued, to: .running, result: nil) }
        } catch {
            DaemonLog.error("cannot record the start of job \(id): \(error)")
        }
    }

    private func operationFinished(_ id: JobID, in queue: QueueName, result: JobResult) {
        operations[id] = nil
        runners[queue]?.inFlight.remove(id)
        let wasStarted = startedJobs.remove(id) != nil
        if isStopping && !wasStarted {
            // Never started: it stays queued for the next daemon.
        } else {
            do {
                try record(id, finishedAs: result)
            } catch {
                DaemonLog.error("cannot record the end of job \(id) (\(result.name)): \(error)")
            }
        }
        if let runner = runners[queue] { feed(runner) }
        finishShutdownIfIdle()
    }

    /// Commits a job's end, updates counters, tells observers and waiters.
    private func record(_ id: JobID, finishedAs result: JobResult) throws(SchedulerError) {
        let previous = try existingJob(id)
        let job: Job
        do {
            job = try store.markFinished(id, result: result, at: Date())
        } catch {
            throw .storage(String(describing: error))
        }
        switch previous.state {
        case .waiting: counts.waiting -= 1
        case .queued: counts.queued -= 1
        case .running: counts.running -= 1
        case .finished: break
        }
        counts.finished += 1
        observers.notify { $0.job(job, changedFrom: previous.state, to: job.state, result: result) }
        for request in waiters.removeValue(forKey: id) ?? [] {
            request.remaining.remove(id)
            if request.remaining.isEmpty { answer(request) }
        }
    }

    private func finishShutdownIfIdle() {
        guard isStopping, operations.isEmpty, let completion = shutdownCompletion else { return }
        shutdownCompletion = nil
        completion()
    }

    // MARK: - Waiting

    /// Registers a wait; answers at once when every job has already finished.
    private func awaitFinish(of ids: [JobID], completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void) {
        let request = WaitRequest(ids: ids, completion: completion)
        for id in Set(ids) {
            guard let job = try? existingJob(id), !job.state.isFinished else { continue }
            request.remaining.insert(id)
            waiters[id, default: []].append(request)
        }
        if request.remaining.isEmpty { answer(request) }
    }

    private func answer(_ request: WaitRequest) {
        do {
            let jobs = try request.ids.map { id throws(SchedulerError) in try existingJob(id) }
            request.completion(.success(jobs))
        } catch {
            request.completion(.failure(error))
        }
    }

    // MARK: - Recovery

    /// Finishes jobs a previous daemon recorded as running: kills whatever survives of each
    /// one's process group (same boot, same pid and start time, so a reused pid is never
    /// killed) and records it `interrupted`.
    /// - Returns: how many jobs were recovered.
    private func recoverInterruptedJobs() throws -> Int {
        let records = try store.runningJobs()
        for record in records {
            if let pid = record.job.pid, pid > 1, let ticks = record.processStartTicks, record.bootID == ProcStat.bootID,
                ProcStat.startTicks(pid: pid) == ticks
            {
                // The job leads its own process group (posix_spawn with SETSID).
                let group = ProcessGroup(id: pid)
                group.signal(SIGKILL)
                group.waitUntilGone(timeout: .seconds(5))
                DaemonLog.warning("job \(record.job.id): killed process group \(pid) left by the previous daemon")
            }
            _ = try store.markFinished(record.job.id, result: .interrupted, at: Date())
            DaemonLog.warning("job \(record.job.id) was running when the previous daemon stopped; recorded as interrupted")
        }
        return records.count
    }

    private func existingJob(_ id: JobID) throws(SchedulerError) -> Job {
        let job: Job?
        do {
            job = try store.job(id)
        } catch {
            throw .storage(String(describing: error))
        }
        guard let job else { throw .noSuchJob(id) }
        return job
    }
}
