import Foundation
import OrchestratorAPI

// MARK: - Hold, release, edit, suspend and continue

extension Scheduler {
    /// Holds jobs that have not started: a held job stays waiting or queued, and is not
    /// started until released, whatever its queue does (``JobStateMachine/Operation/hold``).
    /// Held stays held across a restart.
    /// - Parameters:
    ///   - ids: the jobs; nothing changes if one is unknown, started or not permitted.
    ///   - held: hold (`true`) or release (`false`).
    ///   - caller: who asks; only jobs they manage (``authorize(_:toManage:)``).
    /// - Returns: the jobs as now stored, once durable.
    /// - Throws: `noSuchJob`, `permissionDenied`, `alreadyStarted`, `alreadyFinished`, or a
    ///   storage failure.
    public func setHeld(_ ids: [JobID], _ held: Bool, by caller: Caller) async throws(SchedulerError) -> [Job] {
        let operation: JobStateMachine.Operation = held ? .hold : .release
        let jobs = try ids.map { id throws(SchedulerError) in try jobForChange(id, by: caller) }
        for job in jobs {
            if case .refused(let refusal) = try decide(operation, for: job) {
                throw error(for: refusal, job: job.id, state: job.state, operation: operation)
            }
        }
        var result: [Job] = []
        for job in jobs {
            let current = try existingJob(job.id)
            switch try decide(operation, for: current) {
            case .setHeld(let value):
                let changed = try storeCall { try store.setHeld(current.id, value) }
                groupCommit.changed()
                if !value { feed(runner(for: changed.spec.queue)) }
                result.append(changed)
            default:
                result.append(current)  // already so
            }
        }
        await durable()
        return result
    }

    /// What ``edit(_:priority:queue:notBefore:name:by:)`` changes; `nil` keeps a value.
    public struct JobEdit: Sendable {
        public var priority: Int?
        public var queue: QueueName?
        public var notBefore: Date?
        /// An empty name removes the name.
        public var name: String?

        /// Creates a value with every field given.
        public init(priority: Int? = nil, queue: QueueName? = nil, notBefore: Date? = nil, name: String? = nil) {
            self.priority = priority
            self.queue = queue
            self.notBefore = notBefore
            self.name = name
        }
    }

    /// Changes a job that has not started (``JobStateMachine/Operation/edit``): its priority,
    /// queue (a declared one), start time and name. A new start time ahead makes a queued
    /// job wait; one that has come queues a waiting job whose dependencies succeeded.
    /// - Returns: the job as now stored, once durable.
    /// - Throws: `noSuchJob`, `permissionDenied`, `alreadyStarted`, `alreadyFinished`,
    ///   `unknownQueue`, `invalidSpec` (a name too long), or a storage failure; nothing
    ///   changed then.
    public func edit(_ id: JobID, _ edit: JobEdit, by caller: Caller) async throws(SchedulerError) -> Job {
        let job = try jobForChange(id, by: caller)
        var spec = job.spec
        if let priority = edit.priority { spec.priority = priority }
        if let queue = edit.queue { spec.queue = queue }
        if let notBefore = edit.notBefore { spec.notBefore = notBefore }
        if let name = edit.name { spec.name = name.isEmpty ? nil : name }
        let state: JobState
        switch JobStateMachine.decide(job.state, .edit, try context(for: .edit, job: job, spec: spec)) {
        case .enter(let next): state = next
        case .refused(let refusal): throw error(for: refusal, job: id, state: job.state, operation: .edit)
        case let outcome: throw .invalidTransition(id, state: job.state.name, operation: "edit (\(outcome))")
        }
        do { try spec.validate() } catch { throw .invalidSpec(error) }
        let target = try declaredRunner(spec.queue)
        let edited = try storeCall { try store.edit(id, spec: spec, state: state) }
        if spec.queue != job.spec.queue {
            let source = runner(for: job.spec.queue)
            source.counts.add(-1, to: job.state)
            noteDrainIfEmpty(source, hadLiveJobs: true)
            changed(edited, from: nil)
        } else {
            changed(edited, from: job.state)
        }
        if edited.state == .waiting { scheduleWakeUp(written: edited.spec.notBefore) }
        feed(target)
        await durable()
        return edited
    }

    /// Stops (`true`) or continues (`false`) a running job's processes
    /// (``JobStateMachine/Operation/suspend``, ``JobStateMachine/Operation/resume``) through
    /// its executor (``ExecutorAttempt/setSuspended(_:completion:)``): a local job's cgroup is
    /// frozen, or in the process-group fallback its process group gets SIGSTOP or SIGCONT
    /// (``JobOperation/setFrozen(_:)``); a Slurm job gets `scontrol suspend` or `resume`. The
    /// job stays running; its timeout goes on counting while it is suspended, and a teardown
    /// (cancel, timeout, shutdown) thaws a local job first. A restart of orchd ends a
    /// suspended local job as it ends any running one.
    /// - Returns: the job as now stored, once durable.
    /// - Throws: `noSuchJob`, `permissionDenied`, `notRunning`, `alreadyFinished`,
    ///   `suspendFailed`, or a storage failure.
    public func setSuspended(_ id: JobID, _ suspended: Bool, by caller: Caller) async throws(SchedulerError) -> Job {
        let operation: JobStateMachine.Operation = suspended ? .suspend : .resume
        let job = try jobForChange(id, by: caller)
        switch try decide(operation, for: job) {
        case .setSuspended(let value):
            guard let running = operations[id] else {
                throw .notRunning(id, operation: Self.verb(operation))
            }
            if let problem = await Self.setSuspended(running, value) { throw .suspendFailed(id, problem) }
            // The attempt may have ended while its executor answered.
            guard operations[id] === running else { throw .notRunning(id, operation: Self.verb(operation)) }
            let changed: Job
            do {
                changed = try storeCall { try store.setSuspended(id, value) }
            } catch {
                _ = await Self.setSuspended(running, !value)  // not recorded: undo, so what is shown stays true
                throw error
            }
            runningJobs[id]?.suspended = value
            groupCommit.changed()
            await durable()
            return changed
        case .refused(let refusal):
            throw error(for: refusal, job: id, state: job.state, operation: operation)
        default:
            // Already so as recorded; the executor is asked all the same, since the job itself
            // may differ from the record (a Slurm admin's scontrol, a crash between an executor's
            // answer and its record). Its answer changes nothing recorded.
            if let running = operations[id] { _ = await Self.setSuspended(running, suspended) }
            return job
        }
    }

    /// Asks an attempt's executor to suspend or continue it, and waits for its answer.
    /// - Returns: `nil` when done, else why not.
    private static func setSuspended(_ attempt: any ExecutorAttempt, _ suspended: Bool) async -> String? {
        await withCheckedContinuation { continuation in
            attempt.setSuspended(suspended) { continuation.resume(returning: $0) }
        }
    }
}
