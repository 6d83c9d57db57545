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
    ///   - reuseExisting: for one spec with a unique key held by a live job, answer with that
    ///     job instead of refusing.
    ///   - completion: the stored jobs, or why nothing was stored.
    public func submit(
        _ specs: [JobSpec], submitterUid: UInt32, reuseExisting: Bool = false,
        completion: @escaping @Sendable (Result<Submission, SchedulerError>) -> Void
    ) {
        for spec in specs {
            do { try spec.validate() } catch {
                completion(.failure(.invalidSpec(error)))
                return
            }
        }
        controlQueue.async { [self] in
            do throws(SchedulerError) {
                let now = Date()
                var planned: [(spec: JobSpec, state: JobState)] = []
                var keys: [String: Int] = [:]
                for (index, spec) in specs.enumerated() {
                    if let key = spec.uniqueKey, keys.updateValue(index, forKey: key) != nil {
                        throw .invalidSpec(.duplicateUniqueKeyInBatch(key))
                    }
                    let context = try context(for: .submit, job: nil, spec: spec, now: now)
                    switch JobStateMachine.decide(nil, .submit, context) {
                    case .enter(let state):
                        planned.append((spec, state))
                    case .refused(.duplicate(let holder, _)) where reuseExisting && specs.count == 1:
                        completion(.success(Submission(jobs: [try existingJob(holder)], existing: true)))
                        return
                    case .refused(let refusal):
                        throw error(for: refusal, job: JobID(rawValue: 0), state: nil, operation: .submit)
                    case let outcome:
                        throw .invalidTransition(JobID(rawValue: 0), state: "not stored", operation: "submit (\(outcome))")
                    }
                }
                let jobs: [Job]
                do {
                    jobs = try store.insert(planned, submitterUid: submitterUid, at: now)
                } catch {
                    throw storageError(error)
                }
                for job in jobs { changed(job, from: nil) }
                // The reply promises durability (synchronous=FULL semantics): after the barrier.
                groupCommit.afterDurable { completion(.success(Submission(jobs: jobs, existing: false))) }
                if jobs.contains(where: { $0.state == .waiting && $0.spec.notBefore != nil }) { scheduleWakeUp() }
                for name in Set(jobs.filter { $0.state == .queued }.map(\.spec.queue)) {
                    feed(runner(for: name))
                }
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Looks up one job and its finished attempts.
    public func job(
        _ id: JobID, completion: @escaping @Sendable (Result<(job: Job, attempts: [JobAttempt]), SchedulerError>) -> Void
    ) {
        controlQueue.async { [self] in
            completion(Result { () throws(SchedulerError) -> (job: Job, attempts: [JobAttempt]) in
                let job = try existingJob(id)
                do {
                    return (job, try store.attempts(of: id))
                } catch {
                    throw storageError(error)
                }
            })
        }
    }

    /// Lists jobs matching every filter given, in ID order.
    /// - Parameter limit: only the newest this many; `nil` for all.
    public func list(
        ids: [JobID]?, queue: QueueName?, stateName: String?, limit: Int? = nil,
        completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void
    ) {
        controlQueue.async { [self] in
            do {
                completion(.success(try store.jobs(ids: ids, queue: queue, stateName: stateName, limit: limit)))
            } catch {
                completion(.failure(storageError(error)))
            }
        }
    }

    /// Cancels jobs: finishes those not started, tears down the running ones.
    /// - Parameters:
    ///   - ids: the jobs; nothing is cancelled if one is unknown, finished or not permitted.
    ///   - uid: the caller; root may cancel any job, others only their own.
    ///   - completion: the jobs once all of them have finished.
    public func cancel(
        _ ids: [JobID], by uid: UInt32, completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void
    ) {
        controlQueue.async { [self] in
            do throws(SchedulerError) {
                let jobs = try ids.map { id throws(SchedulerError) in try existingJob(id) }
                for job in jobs {
                    if case .refused(let refusal) = try decide(.cancel, for: job) {
                        throw error(for: refusal, job: job.id, state: job.state, operation: .cancel)
                    }
                    if uid != 0 && uid != job.submitterUid { throw .notPermitted(job.id) }
                }
                for job in jobs {
                    // Read again: cancelling an earlier job may have failed this one.
                    let current = try existingJob(job.id)
                    switch try decide(.cancel, for: current) {
                    case .stop(let reason):
                        if let operation = operations[current.id] {
                            operation.stop(reason: reason)
                        } else {
                            // Recorded running with no process of this daemon (never spawned):
                            // nothing to tear down.
                            try record(current, finishedAs: reason.jobResult)
                        }
                    case .enter(.finished(let result)):
                        try record(current, finishedAs: result)
                    default:
                        break  // finished meanwhile (a dependency of it was cancelled first)
                    }
                }
                awaitFinish(of: ids, completion: completion)
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Runs a finished job again: same ID, the next attempt number, one more attempt allowed,
    /// by the rules of ``JobStateMachine``: queued, or waiting for an unfinished dependency or
    /// its start time; refused when a dependency did not succeed or was pruned, or when
    /// another live job holds its unique key. A paused queue stays paused.
    public func retry(_ id: JobID, by uid: UInt32, completion: @escaping @Sendable (Result<Job, SchedulerError>) -> Void) {
        controlQueue.async { [self] in
            do throws(SchedulerError) {
                let previous = try existingJob(id)
                if uid != 0 && uid != previous.submitterUid { throw .notPermitted(id) }
                let state: JobState
                switch try decide(.retry, for: previous) {
                case .enter(let next): state = next
                case .refused(let refusal): throw error(for: refusal, job: id, state: previous.state, operation: .retry)
                case let outcome: throw .invalidTransition(id, state: previous.state.name, operation: "retry (\(outcome))")
                }
                let job = try storeCall { try store.markRequeued(id, to: state) }
                changed(job, from: previous.state)
                groupCommit.afterDurable { completion(.success(job)) }
                if job.state == .waiting { scheduleWakeUp() } else { feed(runner(for: job.spec.queue)) }
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

    /// How many jobs are in each state, over all queues.
    public func jobCounts(completion: @escaping @Sendable (JobCounts) -> Void) {
        controlQueue.async { [self] in completion(totalCounts) }
    }

    /// Deletes finished jobs and their logs, a bounded batch per transaction, never one a
    /// live job depends on (``JobStateMachine/Operation/prune``).
    /// - Parameters:
    ///   - olderThan: only jobs finished at least this long ago; `nil` for every finished job.
    ///   - completion: how many jobs were deleted.
    public func prune(olderThan: Duration?, completion: @escaping @Sendable (Result<Int, SchedulerError>) -> Void) {
        let cutoff = olderThan.map { Date().addingTimeInterval(-$0.timeInterval) }
        controlQueue.async { [self] in
            prunePage(before: cutoff, atMost: nil, after: nil, total: 0, completion: completion)
        }
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
        let pageSize = 1000
        let deleted: [(id: JobID, queue: QueueName)]
        let page: [JobStore.PruneCandidate]
        do {
            page = try store.finishedJobs(finishedBefore: cutoff, after: cursor, limit: pageSize)
            let now = Date()
            var chosen = page.filter { candidate in
                let context = JobStateMachine.Context(now: now, hasLiveDependents: candidate.hasLiveDependents)
                return JobStateMachine.decide(candidate.state, .prune, context) == .delete
            }.map(\.id)
            if let atMost { chosen = Array(chosen.prefix(max(0, atMost - total))) }
            deleted = try store.deleteFinished(chosen)
        } catch {
            completion(.failure(storageError(error)))
            return
        }
        for (id, queue) in deleted {
            runner(for: queue).counts.finished -= 1
            unlink(logPath(of: id, stream: .stdout))
            unlink(logPath(of: id, stream: .stderr))
        }
        let sum = total + deleted.count
        if !deleted.isEmpty { groupCommit.changed() }
        guard page.count == pageSize, atMost.map({ sum < $0 }) ?? true, let last = page.last else {
            completion(.success(sum))
            return
        }
        controlQueue.async { [self] in
            prunePage(before: cutoff, atMost: atMost, after: last, total: sum, completion: completion)
        }
    }

    // MARK: - Waiting

    /// Registers a wait; answers at once when every job has already finished.
    func awaitFinish(of ids: [JobID], completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void) {
        let request = WaitRequest(ids: ids, completion: completion)
        for id in Set(ids) {
            guard let job = try? existingJob(id) else { continue }
            guard !job.state.isFinished else {
                request.finished[id] = job
                continue
            }
            request.remaining.insert(id)
            waiters[id, default: []].append(request)
        }
        if request.remaining.isEmpty { answer(request) }
    }

    /// Answers a wait once the ends it reports are durable.
    func answer(_ request: WaitRequest) {
        let outcome: Result<[Job], SchedulerError>
        do {
            outcome = .success(try request.ids.map { id throws(SchedulerError) in
                if let job = request.finished[id] { return job }
                return try existingJob(id)
            })
        } catch {
            outcome = .failure(error)
        }
        let completion = request.completion
        groupCommit.afterDurable { completion(outcome) }
    }
}
