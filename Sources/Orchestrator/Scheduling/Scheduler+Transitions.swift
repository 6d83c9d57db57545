import Foundation
import OrchestratorAPI

// MARK: - Asking the job state machine

extension Scheduler {
    /// The facts ``JobStateMachine`` needs to decide `operation` on a job (or a spec not
    /// stored yet), read from the store and the queues.
    /// - Parameters:
    ///   - operation: what is asked.
    ///   - job: the stored job; `nil` for a submit.
    ///   - spec: the job's spec (the new one for a submit).
    ///   - owner: who submits (a submit; otherwise the stored job's owner): unique keys are
    ///     each user's own.
    ///   - now: the current time.
    /// - Throws: ``SchedulerError/storage(_:)`` when the store cannot be read.
    func context(
        for operation: JobStateMachine.Operation, job: Job?, spec: JobSpec, owner: UInt32? = nil, now: Date = Date()
    ) throws(SchedulerError) -> JobStateMachine.Context {
        var context = JobStateMachine.Context(now: now, notBefore: spec.notBefore)
        switch operation {
        case .submit:
            // The new job's dependency rows do not exist yet: look the jobs up one by one.
            for dependency in spec.after {
                let state = try storeCall { try store.job(dependency)?.state }
                if state != .finished(.succeeded) { context.unsucceededDependencies.append((dependency, state)) }
            }
            context.uniqueKeyHolder = try holder(of: spec.uniqueKey, owner: owner ?? 0, other: nil)
        case .retry:
            if let job {
                context.unsucceededDependencies = try storeCall { try store.unsucceededDependencies(of: [job.id])[job.id] ?? [] }
            }
            context.uniqueKeyHolder = try holder(of: spec.uniqueKey, owner: job?.submitterUid ?? owner ?? 0, other: job?.id)
        case .claim:
            context.queuePaused = runners[spec.queue]?.settings.paused ?? false
            context.held = job?.held ?? false
        case .releaseClaim:
            context.processSpawned = job.map { startedJobs.contains($0.id) } ?? false
        case .endAttempt:
            context.attempt = job?.attempt ?? 0
            context.maxAttempts = spec.maxAttempts
            context.retriesCancelled = job.map { retriesCancelled.contains($0.id) } ?? false
            // Only a job with attempts left can be retried; the backoff's jitter costs a
            // getrandom(2) that every other end (nearly all) would pay for nothing.
            if context.attempt < context.maxAttempts {
                let policy = runner(for: spec.queue).retryPolicy(default: configuration.retryPolicy)
                // Never past what a timestamp can say, whatever an older orchd stored as the
                // queue's backoff: a start time in the year 10000 could not be listed.
                context.retryAt = min(
                    now.addingTimeInterval(policy.backoff(afterAttempt: context.attempt).timeInterval),
                    Date(timeIntervalSince1970: JobSpec.latestStartSeconds - 1))
            }
        case .promote, .prune:
            // Decided for many jobs at once, with the facts read together with the candidates
            // (``promoteEligible(_:now:)``, the prune walk).
            break
        case .timeOut, .cancel, .failDependency, .dependencyRetried:
            break
        case .hold, .release:
            context.held = job?.held ?? false
        case .suspend, .resume:
            context.suspended = job?.suspended ?? false
        case .edit:
            if let job {
                context.unsucceededDependencies = try storeCall { try store.unsucceededDependencies(of: [job.id])[job.id] ?? [] }
            }
        }
        return context
    }

    /// Decides `operation` on a stored job with the facts read by ``context(for:job:spec:now:)``.
    func decide(_ operation: JobStateMachine.Operation, for job: Job, now: Date = Date()) throws(SchedulerError) -> JobStateMachine.Outcome {
        JobStateMachine.decide(job.state, operation, try context(for: operation, job: job, spec: job.spec, now: now))
    }

    /// The error a client gets for a refusal.
    /// - Parameters:
    ///   - refusal: what the state machine said.
    ///   - id: the job (0 for a submit).
    ///   - state: the job's state, for an invalid operation.
    ///   - operation: what was asked.
    func error(
        for refusal: JobStateMachine.Refusal, job id: JobID, state: JobState?, operation: JobStateMachine.Operation
    ) -> SchedulerError {
        switch refusal {
        case .alreadyFinished: .alreadyFinished(id)
        case .notFinished: .notFinished(id)
        case .duplicate(let holder, let key): .duplicate(holder, uniqueKey: key)
        case .dependencyNotSucceeded(let dependency, let result): .dependencyNotSucceeded(id, dependency: dependency, result: result)
        case .missingDependency(let dependency):
            operation == .submit
                ? .invalidSpec(.unknownDependency(dependency)) : .dependencyNotSucceeded(id, dependency: dependency, result: nil)
        case .alreadyStarted: .alreadyStarted(id, operation: Self.verb(operation))
        case .notRunning: .notRunning(id, operation: Self.verb(operation))
        case .invalid, .queuePaused, .dependedOn, .held:
            .invalidTransition(id, state: state?.name ?? "not stored", operation: "\(operation)")
        }
    }

    /// How messages name an operation a client asked for ("job 7 has already started, so it
    /// cannot be held").
    static func verb(_ operation: JobStateMachine.Operation) -> String {
        switch operation {
        case .hold: "held"
        case .release: "released"
        case .edit: "edited"
        case .suspend: "suspended"
        case .resume: "continued"
        case .cancel: "cancelled"
        case .retry: "retried"
        default: "changed"
        }
    }

    /// Runs a store call, turning its error into ``SchedulerError/storage(_:)``.
    func storeCall<T>(_ body: () throws -> T) throws(SchedulerError) -> T {
        do { return try body() } catch { throw storageError(error) }
    }

    private func holder(of key: String?, owner: UInt32, other id: JobID?) throws(SchedulerError) -> (id: JobID, key: String)? {
        guard let key, let live = try storeCall({ try store.liveJob(uniqueKey: key, owner: owner) }), live.id != id else { return nil }
        return (live.id, key)
    }
}
