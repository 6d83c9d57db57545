import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

// MARK: - Requests from clients

extension Scheduler {
    /// What `submit` stored: the jobs, and whether one already existed (`reuseExisting`).
    public struct Submission: Sendable {
        /// The jobs.
        public var jobs: [Job]
        public var existing: Bool
    }

    /// Stores new jobs, in one transaction, and starts what can start.
    ///
    /// Each job's first state is ``JobStateMachine``'s: `finished(dependencyFailed)` when a
    /// dependency already did not succeed, `waiting` while a dependency is unfinished or its
    /// start time is ahead, else `queued`.
    /// - Parameters:
    ///   - specs: the jobs; all are refused if one is invalid.
    ///   - submitterUid: the caller's uid (from `SO_PEERCRED`).
    ///   - reuseExisting: for one spec with a unique key held by a live job of the same
    ///     submitter, answer with that job instead of refusing (another user's is refused).
    ///   - isAdmin: whether the submitter manages every job; one who does not may name only
    ///     their own jobs in `after` (a dependent learns its dependency's outcome, which
    ///     `wait` keeps from other users).
    /// - Returns: the stored jobs, once durable.
    /// - Throws: why nothing was stored; `permissionDenied` for another user's job in `after`.
    public func submit(
        _ specs: [JobSpec], submitterUid: UInt32, reuseExisting: Bool = false, isAdmin: Bool = true
    ) async throws(SchedulerError) -> Submission {
        try await withCheckedContinuation { (done: CheckedContinuation<Result<Submission, SchedulerError>, Never>) in
            submit(specs, submitterUid: submitterUid, reuseExisting: reuseExisting, isAdmin: isAdmin) { done.resume(returning: $0) }
        }.get()
    }

    /// ``submit(_:submitterUid:reuseExisting:)`` for the server: `reply` gets the stored jobs
    /// once durable, called from the group commit's turn itself, right after the events go
    /// out (an awaiting task would resume in a later turn of the control queue); it gets a
    /// refusal, or the existing job of `reuseExisting`, at once.
    func submit(
        _ specs: [JobSpec], submitterUid: UInt32, reuseExisting: Bool = false, isAdmin: Bool = true,
        reply: @escaping @Sendable (Result<Submission, SchedulerError>) -> Void
    ) {
        let submission: Submission
        do {
            submission = try store(specs, submitterUid: submitterUid, reuseExisting: reuseExisting, isAdmin: isAdmin)
        } catch {
            return reply(.failure(error))
        }
        guard !submission.existing else { return reply(.success(submission)) }
        // The reply promises durability (synchronous=FULL semantics): after the barrier.
        groupCommit.afterDurable { reply(.success(submission)) }
    }

    /// The part of a submit before the barrier: checks, stores and starts the jobs.
    /// - Returns: what was stored, not yet durable; or the existing job (`existing`).
    private func store(
        _ specs: [JobSpec], submitterUid: UInt32, reuseExisting: Bool, isAdmin: Bool
    ) throws(SchedulerError) -> Submission {
        // A job stored now could not get its reply before the connections close.
        guard !isStopping else { throw .stopping }
        var validEnvironment: [String: String]?
        let submitter = Caller(uid: submitterUid, isAdmin: isAdmin)
        var ownDependencies: Set<JobID> = []  // each read once, however many specs name it
        for spec in specs {
            let known = validEnvironment.map { JobSpec.isSameDictionary($0, spec.environment) } ?? false
            do { try spec.validate(environmentAlreadyValid: known) } catch {
                throw .invalidSpec(error)
            }
            validEnvironment = spec.environment
            _ = try declaredRunner(spec.queue)
            for dependency in spec.after where !isAdmin && ownDependencies.insert(dependency).inserted {
                // Read by two plain columns; an unknown ID is the state machine's to refuse.
                if let (owner, _) = try storeCall({ try store.ownerAndProgress(dependency) }),
                    !submitter.mayManage(owner: owner)
                {
                    throw .permissionDenied(dependency)
                }
            }
        }
        let now = Date()
        var planned: [(spec: JobSpec, state: JobState)] = []
        var keys: [String: Int] = [:]
        for (index, spec) in specs.enumerated() {
            if let key = spec.uniqueKey, keys.updateValue(index, forKey: key) != nil {
                throw .invalidSpec(.duplicateUniqueKeyInBatch(key))
            }
            let context = try context(for: .submit, job: nil, spec: spec, owner: submitterUid, now: now)
            switch JobStateMachine.decide(nil, .submit, context) {
            case .enter(let state):
                planned.append((spec, state))
            case .refused(.duplicate(let holder, let key)) where reuseExisting && specs.count == 1:
                // Unique keys are each user's own, so the holder is the submitter's job.
                let existing = try existingJob(holder)
                guard existing.submitterUid == submitterUid else { throw .duplicate(holder, uniqueKey: key) }
                return Submission(jobs: [existing], existing: true)
            case .refused(let refusal):
                throw error(for: refusal, job: JobID(rawValue: 0), state: nil, operation: .submit)
            case let outcome:
                throw .invalidTransition(JobID(rawValue: 0), state: "not stored", operation: "submit (\(outcome))")
            }
        }
        let jobs: [Job]
        let claimed: [(runner: QueueRunner, jobs: [Job])]
        do {
            // The free slots the new jobs can take are claimed in the same transaction: a
            // commit's cost is mostly the pages it writes to the WAL, and an insert and a claim
            // in the same queue change the same ones. A claim that fails stores nothing.
            (jobs, claimed) = try store.insert(planned, submitterUid: submitterUid, at: now) { jobs in
                try Set(jobs.filter { $0.state == .queued }.map(\.spec.queue)).sorted { $0.rawValue < $1.rawValue }.map { name in
                    let runner = runner(for: name)
                    return (runner, try claimForStart(runner, queuedUncounted: true))
                }
            }
        } catch {
            throw storageError(error)
        }
        for job in jobs { changed(job, from: nil) }
        if let start = jobs.filter({ $0.state == .waiting }).compactMap(\.spec.notBefore).min() {
            scheduleWakeUp(written: start)
        }
        for (runner, jobs) in claimed { start(jobs, in: runner) }
        // Each job as committed: one claimed in the same transaction never was `queued`.
        let started = Dictionary(claimed.flatMap(\.jobs).map { ($0.id, $0) }) { first, _ in first }
        return Submission(jobs: started.isEmpty ? jobs : jobs.map { started[$0.id] ?? $0 }, existing: false)
    }

    /// Returns once every change committed so far is durable (the group-commit barrier), the
    /// caller's own included: one it committed without noting it (``GroupCommit/changed()``)
    /// is covered too.
    func durable() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            groupCommit.afterDurable { done.resume() }
        }
    }

    /// Returns once every change committed so far is durable, for an answer that changes
    /// nothing itself: at once when no change waits for a barrier (``GroupCommit/whenDurable(_:)``).
    func durableSoFar() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            groupCommit.whenDurable { done.resume() }
        }
    }

    /// Looks up one job and its finished attempts.
    /// - Parameter caller: who asks; only the job's owner and admins may see it.
    /// - Throws: `noSuchJob`, `permissionDenied`, or a storage failure.
    public func job(_ id: JobID, by caller: Caller = .root) throws(SchedulerError) -> (job: Job, attempts: [JobAttempt]) {
        let job = try existingJob(id)
        try authorize(caller, toManage: job)
        do {
            return (job, try store.attempts(of: id))
        } catch {
            throw storageError(error)
        }
    }

    /// Lists jobs matching every filter given, in ID order.
    /// - Parameters:
    ///   - limit: only the newest this many; `nil` for all.
    ///   - owner: only the jobs of this uid; `nil` for everyone's.
    ///   - result: only finished jobs with this result (``JobResult/name``).
    ///   - labels: only jobs carrying every one of these labels with these values.
    public func list(
        ids: [JobID]?, queue: QueueName?, stateName: String?, limit: Int? = nil, owner: UInt32? = nil, result: String? = nil,
        labels: [String: String]? = nil
    ) throws(SchedulerError) -> [Job] {
        try storeCall {
            try store.jobs(ids: ids, queue: queue, stateName: stateName, limit: limit, owner: owner, result: result, labels: labels)
        }
    }

    /// ``list(ids:queue:stateName:limit:owner:result:labels:)`` for a caller that may have gone
    /// while the request waited for its turn: `nil`, and nothing read, when `isWanted` says so
    /// as the turn begins. A client that hangs up at once costs the scheduler nothing, so a loop
    /// of such calls cannot pile work onto the control queue.
    public func list(
        ids: [JobID]?, queue: QueueName?, stateName: String?, limit: Int?, owner: UInt32?, result: String?,
        labels: [String: String]?, while isWanted: @Sendable () -> Bool
    ) throws(SchedulerError) -> [Job]? {
        guard isWanted() else { return nil }
        return try list(ids: ids, queue: queue, stateName: stateName, limit: limit, owner: owner, result: result, labels: labels)
    }

    /// The one path by which a client's request reaches a stored job it changes: settles an
    /// end the store has not taken yet, reads the job, and checks that the caller may
    /// change it (``authorize(_:toManage:)``).
    /// - Throws: `noSuchJob`, `permissionDenied`, or a storage failure.
    func jobForChange(_ id: JobID, by caller: Caller) throws(SchedulerError) -> Job {
        try settlePendingEnd(of: id)
        let job = try existingJob(id)
        try authorize(caller, toManage: job)
        return job
    }

    /// Runs a finished job again: same ID, the next attempt number, one more attempt allowed,
    /// by the rules of ``JobStateMachine``: queued, or waiting for an unfinished dependency or
    /// its start time; refused when a dependency did not succeed or was pruned, or when
    /// another live job holds its unique key, or its queue is no longer declared. A paused
    /// queue stays paused.
    /// - Returns: the job as now stored, once durable.
    public func retry(_ id: JobID, by caller: Caller) async throws(SchedulerError) -> Job {
        let job = try retryOne(id, by: caller)
        await durable()
        return job
    }

    /// Retries every job that finished failed (each unsuccessful result but `cancelled`,
    /// as the `failed` hook has it), oldest first, each by the same per-job path as
    /// ``retry(_:by:)``, ``jobsPerTurn`` of them a turn; one that cannot be retried is
    /// reported with the reason.
    /// - Parameters:
    ///   - queue: only this queue's jobs; `nil` for any.
    ///   - caller: who asks; only the jobs they manage are retried.
    /// - Returns: the retried jobs as now stored, and the refused ones with why, once durable.
    /// - Throws: `unknownQueue` for a queue orchd does not know; a storage failure.
    public func retryFailed(queue: QueueName?, by caller: Caller) async throws(SchedulerError) -> (jobs: [Job], refused: [(JobID, SchedulerError)]) {
        try requireKnownQueue(queue)
        let ids = try storeCall { try store.finishedJobIDs(results: HookEvent.failed.results, queue: queue) }
        var retried: [Job] = []
        var refused: [(JobID, SchedulerError)] = []
        for (index, id) in ids.enumerated() {
            // Each is read again in its turn: one retried or pruned meanwhile is refused or left out.
            if index > 0 && index % Self.jobsPerTurn == 0 && !isStopping { await Task.yield() }
            do throws(SchedulerError) {
                retried.append(try retryOne(id, by: caller))
            } catch {
                switch error {
                // Pruned meanwhile, not theirs, or retried meanwhile by another call (a second
                // retry --failed): none of them is a failed job of theirs any more.
                case .noSuchJob, .permissionDenied, .notFinished: continue
                case _ where error.isStoreRefusal: throw error
                default: refused.append((id, error))
                }
            }
        }
        await durable()
        return (retried, refused)
    }

    /// Retries one job (see ``retry(_:by:)``), without waiting for durability.
    private func retryOne(_ id: JobID, by caller: Caller) throws(SchedulerError) -> Job {
        let previous = try jobForChange(id, by: caller)
        let state: JobState
        switch try decide(.retry, for: previous) {
        case .enter(let next): state = next
        case .refused(let refusal): throw error(for: refusal, job: id, state: previous.state, operation: .retry)
        case let outcome: throw .invalidTransition(id, state: previous.state.name, operation: "retry (\(outcome))")
        }
        _ = try declaredRunner(previous.spec.queue)
        let now = Date()
        let (job, waitingAgain) = try storeCall {
            try store.markRequeued(id, to: state) { dependent in
                if case .enter(.waiting) = JobStateMachine.decide(dependent.state, .dependencyRetried, .init(now: now)) { return true }
                return false
            }
        }
        changed(job, from: previous.state)
        for dependent in waitingAgain { changed(dependent, from: .queued) }
        if job.state == .waiting { scheduleWakeUp(written: job.spec.notBefore) } else { feed(runner(for: job.spec.queue)) }
        return job
    }

    /// Answers once every job in `ids` has finished.
    /// - Parameter caller: who waits; only for their own jobs unless an admin.
    /// - Returns: the finished jobs, once their ends are durable.
    /// - Throws: `noSuchJob` for an unknown ID, `permissionDenied` for another user's job.
    public func wait(for ids: [JobID], by caller: Caller = .root) async throws(SchedulerError) -> [Job] {
        // Each job read once, for the permission and for the wait: nothing runs between. One
        // that has not finished is read narrowly; the answer reads it once it has ended.
        var read: [JobID: Job] = [:]
        var unfinished: Set<JobID> = []
        for id in ids where read[id] == nil && !unfinished.contains(id) {
            guard let (owner, isFinished) = try storeCall({ try store.ownerAndProgress(id) }) else {
                throw .noSuchJob(id)
            }
            guard caller.mayManage(owner: owner) else { throw .permissionDenied(id) }
            if isFinished {
                read[id] = try existingJob(id)
            } else {
                unfinished.insert(id)
            }
        }
        return try await finish(of: ids, read: read, unfinished: unfinished)
    }

    /// How many jobs are in each state, over all queues.
    public var jobCounts: JobCounts { totalCounts }

    /// Deletes finished jobs and their logs, a bounded batch per transaction, never one a
    /// live job depends on (``JobStateMachine/Operation/prune``).
    /// - Parameters:
    ///   - olderThan: only jobs finished at least this long ago; `nil` for every finished job.
    /// - Returns: how many jobs were deleted.
    public func prune(olderThan: Duration?) async throws(SchedulerError) -> Int {
        let cutoff = olderThan.map { Date().addingTimeInterval(-$0.timeInterval) }
        return try await withCheckedContinuation { (done: CheckedContinuation<Result<Int, SchedulerError>, Never>) in
            prunePage(before: cutoff, atMost: nil, after: nil, total: 0) { done.resume(returning: $0) }
        }.get()
    }

    /// One page of the walk over finished jobs, oldest first; the next page in a later turn
    /// of the control queue, so other work interleaves with a large prune. Call on the
    /// control queue.
    /// - Parameters:
    ///   - cutoff: only jobs finished before this time; `nil` for any.
    ///   - atMost: delete no more than this many in all; `nil` for no limit.
    ///   - after: the last candidate of the previous page.
    ///   - total: deleted so far.
    ///   - completion: how many were deleted in all, called on the control queue.
    func prunePage(
        before cutoff: Date?, atMost: Int?, after cursor: JobStore.PruneCandidate?, total: Int,
        completion: @escaping @Sendable (Result<Int, SchedulerError>) -> Void
    ) {
        // No more candidates than the jobs still to delete: a trim to the retention count
        // deletes one or two jobs at each end, and reading a page of 1,000 for them (with
        // each one's dependents) was most of its cost. A candidate kept for its live
        // dependents only makes the walk read on.
        let pageSize = min(1000, atMost.map { max(1, $0 - total) } ?? .max)
        let deleted: [(id: JobID, queue: QueueName, owner: UInt32, attempts: Int)]
        let page: [JobStore.PruneCandidate]
        do {
            page = try store.finishedJobs(finishedBefore: cutoff, after: cursor, limit: pageSize)
            let now = Date()
            var chosen = page.filter { candidate in
                let context = JobStateMachine.Context(now: now, hasLiveDependents: candidate.hasLiveDependents)
                return JobStateMachine.decide(candidate.state, .prune, context) == .delete
            }
            if let atMost { chosen = Array(chosen.prefix(max(0, atMost - total))) }
            do {
                deleted = try store.deleteFinished(chosen.map(\.id))
            } catch let error as DatabaseError where error.isFull {
                // The delete needs room in the WAL, and a full disk is when a prune is wanted
                // most: the chosen jobs' logs, which go with them anyway, are removed first,
                // then the delete is tried once more. Should it fail again, the jobs stay,
                // without their logs, and the error says the disk is full.
                for candidate in chosen { removeLogs(of: candidate.id, owner: candidate.owner, attempts: candidate.attempts) }
                deleted = try store.deleteFinished(chosen.map(\.id))
            }
        } catch {
            completion(.failure(storageError(error)))
            return
        }
        for (id, queue, owner, attempts) in deleted {
            let runner = runner(for: queue)
            runner.counts.finished -= 1
            // A removed queue was known only for its finished jobs: with the last one gone,
            // so is the queue (a filter naming it is then refused, as after a restart).
            if !runner.isDeclared, runner.counts.live == 0, runner.counts.finished <= 0 { runners[queue] = nil }
            removeLogs(of: id, owner: owner, attempts: attempts)
        }
        let sum = total + deleted.count
        if !deleted.isEmpty { groupCommit.changed() }
        guard page.count == pageSize, atMost.map({ sum < $0 }) ?? true, let last = page.last else {
            completion(.success(sum))
            return
        }
        later { $0.prunePage(before: cutoff, atMost: atMost, after: last, total: sum, completion: completion) }
    }

    // MARK: - Waiting

    /// Returns once attempt `attempt` of a job is over: the job finished, or that attempt
    /// ended (a retry waits or is queued), or a later one started. At once when it already
    /// is, or when the job is gone (pruned).
    /// - Returns: the job as then stored; `nil` when it is gone.
    public func attemptOver(_ id: JobID, attempt: Int) async -> Job? {
        await withCheckedContinuation { (done: CheckedContinuation<Job?, Never>) in
            guard let job = storedJob(id), !Self.isOver(job, attempt: attempt) else {
                done.resume(returning: storedJob(id))
                return
            }
            attemptWatchers[id, default: []].append((attempt, { done.resume(returning: $0) }))
        }
    }

    /// Returns once every job in `ids` has finished and its end is durable.
    /// - Parameters:
    ///   - read: jobs of `ids` the caller has just read, as stored now; the others are read
    ///     here.
    ///   - unfinished: jobs of `ids` the caller has just seen unfinished; not read here.
    func finish(
        of ids: [JobID], read: [JobID: Job] = [:], unfinished: Set<JobID> = [], failingOnKeptEnd: Bool = false
    ) async throws(SchedulerError) -> [Job] {
        try await withCheckedContinuation { (done: CheckedContinuation<Result<[Job], SchedulerError>, Never>) in
            awaitFinish(of: ids, read: read, unfinished: unfinished, failingOnKeptEnd: failingOnKeptEnd) { done.resume(returning: $0) }
        }.get()
    }

    /// Registers a wait; answers at once when every job has already finished.
    /// - Parameters:
    ///   - read: jobs of `ids` as stored now, not to read again.
    ///   - unfinished: jobs of `ids` known not to have finished now, not to read at all.
    ///   - failingOnKeptEnd: a cancel's wait (``WaitRequest/failsOnKeptEnd``).
    func awaitFinish(
        of ids: [JobID], read: [JobID: Job] = [:], unfinished: Set<JobID> = [], failingOnKeptEnd: Bool = false,
        completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void
    ) {
        let request = WaitRequest(ids: ids, completion: completion)
        request.failsOnKeptEnd = failingOnKeptEnd
        for id in Set(ids) {
            // Ended, with an end the store refused so far: a cancel does not wait for the store.
            if failingOnKeptEnd, let end = pendingEnds[id] {
                request.kept[id] = end.result
                request.keptCause = request.keptCause ?? end.cause
                continue
            }
            if !unfinished.contains(id) {
                guard let job = read[id] ?? (try? existingJob(id)) else { continue }
                guard !job.state.isFinished else {
                    request.finished[id] = job
                    continue
                }
            }
            request.remaining.insert(id)
            waiters[id, default: []].append(request)
        }
        if request.remaining.isEmpty { answer(request) }
    }

    /// Answers a wait once the ends it reports are durable.
    func answer(_ request: WaitRequest) {
        let outcome: Result<[Job], SchedulerError>
        if !request.kept.isEmpty {
            let ends = request.kept.sorted { $0.key < $1.key }.map { (id: $0.key, result: $0.value) }
            outcome = .failure(.endKept(ends, cause: request.keptCause ?? .storage("the database refused the write")))
        } else { do {
            outcome = .success(try request.ids.map { id throws(SchedulerError) in
                if let job = request.finished[id] { return job }
                return try existingJob(id)
            })
        } catch {
            outcome = .failure(error)
        } }
        let completion = request.completion
        groupCommit.whenDurable { completion(outcome) }
    }
}
