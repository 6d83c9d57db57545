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
    /// Each job's first state follows from its spec: `finished(dependencyFailed)` when a
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
                    if let key = spec.uniqueKey {
                        if let live = try liveJob(uniqueKey: key) {
                            if reuseExisting && specs.count == 1 {
                                completion(.success(Submission(jobs: [live], existing: true)))
                                return
                            }
                            throw .duplicate(live.id, uniqueKey: key)
                        }
                        if keys.updateValue(index, forKey: key) != nil {
                            throw .invalidSpec(.duplicateUniqueKeyInBatch(key))
                        }
                    }
                    planned.append((spec, try initialState(of: spec, now: now)))
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

    private func liveJob(uniqueKey: String) throws(SchedulerError) -> Job? {
        do { return try store.liveJob(uniqueKey: uniqueKey) } catch { throw storageError(error) }
    }

    private func initialState(of spec: JobSpec, now: Date) throws(SchedulerError) -> JobState {
        var waitsForDependency = false
        for dependency in spec.after {
            let job: Job
            do {
                job = try existingJob(dependency)
            } catch .noSuchJob {
                throw .invalidSpec(.unknownDependency(dependency))
            }
            switch job.state {
            case .finished(.succeeded): continue
            case .finished: return .finished(.dependencyFailed(dependency))
            default: waitsForDependency = true
            }
        }
        if waitsForDependency { return .waiting }
        if let notBefore = spec.notBefore, notBefore > now { return .waiting }
        return .queued
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
                    if job.state.isFinished { throw .alreadyFinished(job.id) }
                    if uid != 0 && uid != job.submitterUid { throw .notPermitted(job.id) }
                }
                for job in jobs {
                    if let operation = operations[job.id] {
                        operation.stop(reason: .cancelled)
                    } else if try !existingJob(job.id).state.isFinished {
                        // Checked again: cancelling an earlier job may have failed this one.
                        try record(job.id, finishedAs: .cancelled)
                    }
                }
                awaitFinish(of: ids, completion: completion)
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Runs a finished job again: same ID, the next attempt number, one more attempt allowed.
    public func retry(_ id: JobID, by uid: UInt32, completion: @escaping @Sendable (Result<Job, SchedulerError>) -> Void) {
        controlQueue.async { [self] in
            do throws(SchedulerError) {
                let previous = try existingJob(id)
                guard previous.state.isFinished else { throw .notFinished(id) }
                if uid != 0 && uid != previous.submitterUid { throw .notPermitted(id) }
                if let key = previous.spec.uniqueKey, let live = try liveJob(uniqueKey: key) {
                    throw .duplicate(live.id, uniqueKey: key)
                }
                let job: Job
                do { job = try store.markRequeued(id) } catch { throw storageError(error) }
                changed(job, from: previous.state)
                groupCommit.afterDurable { completion(.success(job)) }
                feed(runner(for: job.spec.queue))
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
    /// live job depends on.
    /// - Parameters:
    ///   - olderThan: only jobs finished at least this long ago; `nil` for every finished job.
    ///   - keepNewest: keep this many of the most recently finished.
    ///   - completion: how many jobs were deleted.
    public func prune(
        olderThan: Duration?, keepNewest: Int = 0, completion: @escaping @Sendable (Result<Int, SchedulerError>) -> Void
    ) {
        let cutoff = olderThan.map { Date().addingTimeInterval(-$0.timeInterval) }
        pruneBatch(before: cutoff, keepNewest: keepNewest, total: 0, completion: completion)
    }

    /// One batch, then the next in a later turn of the control queue, so other work
    /// interleaves with a large prune.
    private func pruneBatch(
        before cutoff: Date?, keepNewest: Int, total: Int, completion: @escaping @Sendable (Result<Int, SchedulerError>) -> Void
    ) {
        let batchSize = 1000
        controlQueue.async { [self] in
            let deleted: [(id: JobID, queue: QueueName)]
            do {
                deleted = try store.pruneFinished(finishedBefore: cutoff, keepNewest: keepNewest, batchSize: batchSize)
            } catch {
                completion(.failure(storageError(error)))
                return
            }
            for (id, queue) in deleted {
                runner(for: queue).counts.finished -= 1
                unlink(logPath(of: id, stream: .stdout))
                unlink(logPath(of: id, stream: .stderr))
            }
            if deleted.count < batchSize {
                completion(.success(total + deleted.count))
            } else {
                pruneBatch(before: cutoff, keepNewest: keepNewest, total: total + deleted.count, completion: completion)
            }
        }
    }

    /// Prunes by the configured retention now and then every ten minutes.
    func scheduleRetention() {
        guard configuration.retentionAge != nil || configuration.retentionCount != nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: controlQueue)
        timer.schedule(deadline: .now(), repeating: .seconds(600))
        timer.setEventHandler { [weak self] in
            guard let self, !self.isStopping else { return }
            self.prune(olderThan: self.configuration.retentionAge, keepNewest: self.configuration.retentionCount ?? 0) { result in
                if case .success(let count) = result, count > 0 { DaemonLog.info("retention: pruned \(count) finished jobs") }
                if case .failure(let error) = result { DaemonLog.error("retention: \(error)") }
            }
        }
        retentionTimer = timer
        timer.activate()
    }

    // MARK: - Waiting

    /// Registers a wait; answers at once when every job has already finished.
    func awaitFinish(of ids: [JobID], completion: @escaping @Sendable (Result<[Job], SchedulerError>) -> Void) {
        let request = WaitRequest(ids: ids, completion: completion)
        for id in Set(ids) {
            guard let job = try? existingJob(id), !job.state.isFinished else { continue }
            request.remaining.insert(id)
            waiters[id, default: []].append(request)
        }
        if request.remaining.isEmpty { answer(request) }
    }

    /// Answers a wait once the ends it reports are durable.
    func answer(_ request: WaitRequest) {
        let outcome: Result<[Job], SchedulerError>
        do {
            outcome = .success(try request.ids.map { id throws(SchedulerError) in try existingJob(id) })
        } catch {
            outcome = .failure(error)
        }
        let completion = request.completion
        groupCommit.afterDurable { completion(outcome) }
    }
}
