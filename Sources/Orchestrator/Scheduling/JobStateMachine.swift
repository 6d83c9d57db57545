import Foundation
import OrchestratorAPI

/// The rules of a job's life, in one place: given the job's state, an operation and the
/// facts the rules need, what happens.
///
/// Every path that changes a job's state asks here first (submit, promotion of waiting jobs,
/// claim for a start, a claim given back, the end of an attempt, timeouts, cancel, the
/// failure of a dependency, retry, crash recovery, prune, hold and release, edit, suspend and
/// continue) and then applies the outcome
/// through the store; the store's SQL only guards against races. Pure: no I/O, and the
/// time comes with the context.
///
/// The moves it allows (``decide(_:_:_:)`` has the conditions):
/// ```
/// (none)   submit        -> queued | waiting | finished(dependency_failed)
/// waiting  promote       -> queued        (start time come, every dependency succeeded)
/// queued   claim         -> running       (queue not paused)
/// running  releaseClaim  -> queued        (stopping daemon, short of descriptors, Slurm unreachable; never started, no event)
/// running  endAttempt    -> waiting       (retryable result, attempts left, not cancelled) | finished
/// running  cancel        -> stop          (torn down; endAttempt follows)
/// running  timeOut       -> stop          (torn down; endAttempt follows)
/// waiting  cancel        -> finished(cancelled)
/// queued   cancel        -> finished(cancelled)
/// waiting  failDependency-> finished(dependency_failed)
/// finished retry         -> queued | waiting   (refused: failed or pruned dependency, key held)
/// finished prune         -> deleted       (refused: a live job depends on it)
/// waiting  hold          -> held          (stays waiting or queued; a held job is not claimed)
/// queued   hold          -> held
/// waiting  release       -> not held
/// queued   release       -> not held
/// waiting  edit          -> queued | waiting   (placement by the new start time)
/// queued   edit          -> queued | waiting
/// running  suspend       -> suspended     (its processes stopped; still running)
/// running  resume        -> not suspended
/// ```
/// `hold`, `release` and `edit` of a running job are refused as already started, of a finished
/// one as already finished; `suspend` and `resume` of a job that is not running are refused.
/// Crash recovery ends a job left running with `endAttempt(interrupted)`.
enum JobStateMachine {
    /// Something that may change a job's state.
    enum Operation: Hashable, Sendable {
        /// Store a new job (its state is none yet).
        case submit
        /// A waiting job's start time came, or one of its dependencies succeeded.
        case promote
        /// A queue has a free slot for a queued job.
        case claim
        /// The daemon stops before the claimed job's process was spawned.
        case releaseClaim
        /// The running attempt ended so. Crash recovery ends it with `interrupted`.
        case endAttempt(JobResult)
        /// The running attempt reached its time limit.
        case timeOut
        /// `orchctl cancel`.
        case cancel
        /// This dependency finished without succeeding.
        case failDependency(JobID)
        /// `orchctl retry`.
        case retry
        /// A job this one depends on was retried: one that has not started follows the
        /// dependency's new outcome.
        case dependencyRetried
        /// Delete the finished job and its logs (`orchctl prune`, retention limits).
        case prune
        /// `orchctl hold`: keep a job that has not started from starting.
        case hold
        /// `orchctl release`: let a held job start again.
        case release
        /// `orchctl edit`: change a job that has not started (priority, queue, start time, name).
        case edit
        /// `orchctl suspend`: stop a running job's processes.
        case suspend
        /// `orchctl continue`: let a suspended job's processes go on.
        case resume

        /// Every operation, with one representative of each that carries a value.
        static let all: [Operation] = [
            .submit, .promote, .claim, .releaseClaim, .endAttempt(.failed(exitCode: 1)), .endAttempt(.succeeded),
            .timeOut, .cancel, .failDependency(JobID(rawValue: 1)), .retry, .dependencyRetried, .prune, .hold, .release,
            .edit, .suspend, .resume,
        ]
    }

    /// The facts the rules depend on. Each operation reads only some of them; the scheduler
    /// fills in those (see the field docs).
    struct Context: Sendable {
        /// The current time (`submit`, `promote`, `retry`).
        var now: Date
        /// The job's start time, if any (`submit`, `promote`, `retry`).
        var notBefore: Date?
        /// The job's dependencies that have not succeeded, in the job's order, each with its
        /// state: `nil` when no such job is stored (never submitted, or pruned)
        /// (`submit`, `promote`, `retry`).
        var unsucceededDependencies: [(id: JobID, state: JobState?)] = []
        /// Another job, not finished, holding the job's unique key (`submit`, `retry`).
        var uniqueKeyHolder: (id: JobID, key: String)?
        /// The job's queue is paused (`claim`).
        var queuePaused = false
        /// The attempt that just ended, and the attempts allowed in all (`endAttempt`).
        var attempt = 0
        var maxAttempts = 1
        /// A cancel came while the attempt's processes were torn down, after its main process
        /// had ended with its own result: that result is final, not retried (`endAttempt`).
        var retriesCancelled = false
        /// When the job would run again after a retryable attempt, from its queue's backoff
        /// (`endAttempt`).
        var retryAt = Date.distantPast
        /// The claimed job's process was spawned (`releaseClaim`).
        var processSpawned = false
        /// A job that is not finished depends on this one (`prune`).
        var hasLiveDependents = false
        /// The job is held (`claim`, `hold`, `release`).
        var held = false
        /// The running job is suspended (`suspend`, `resume`).
        var suspended = false
    }

    /// What happens.
    enum Outcome: Hashable, Sendable {
        /// The job moves to this state.
        case enter(JobState)
        /// The job waits for its next attempt, until this time (a retryable attempt ended).
        case retryLater(at: Date)
        /// The running process is torn down; the job's state changes when it has ended
        /// (``Operation/endAttempt(_:)`` with the reason's result).
        case stop(StopReason)
        /// The job and its logs are deleted.
        case delete
        /// The job stays in its state, held (`true`: not claimed) or released (`false`).
        case setHeld(Bool)
        /// The running job stays running, its processes stopped (`true`) or going on (`false`).
        case setSuspended(Bool)
        /// Nothing changes: the operation no longer applies (a timeout after the job ended,
        /// a promotion before the job is due).
        case unchanged
        /// The operation is not allowed; nothing changes.
        case refused(Refusal)
    }

    /// Why an operation is not allowed.
    enum Refusal: Error, Hashable, Sendable {
        /// The operation never applies in this state (an internal error, or a race the
        /// store's guards catch).
        case invalid
        /// Cancel of a finished job.
        case alreadyFinished
        /// Retry of a job that has not finished; prune of a job that has not finished.
        case notFinished
        /// A dependency finished without succeeding (retry).
        case dependencyNotSucceeded(JobID, JobResult)
        /// A dependency is not stored: an unknown ID (submit) or a pruned job (retry).
        case missingDependency(JobID)
        /// Another live job holds the unique key.
        case duplicate(JobID, uniqueKey: String)
        /// The queue is paused (claim).
        case queuePaused
        /// A job that has not finished depends on it (prune).
        case dependedOn
        /// The job is held (claim).
        case held
        /// The job has started, so it can no longer be held or edited.
        case alreadyStarted
        /// The job is not running, so it cannot be suspended or continued.
        case notRunning
    }

    /// Decides what `operation` does to a job in `state`.
    /// - Parameters:
    ///   - state: the job's current state; `nil` for a job not stored yet.
    ///   - operation: what is asked.
    ///   - context: the facts the rule for `operation` needs.
    /// - Returns: the outcome; never throws, a refusal is an outcome.
    static func decide(_ state: JobState?, _ operation: Operation, _ context: Context) -> Outcome {
        switch (state, operation) {
        case (nil, .submit):
            if let holder = context.uniqueKeyHolder { return .refused(.duplicate(holder.id, uniqueKey: holder.key)) }
            if let missing = context.unsucceededDependencies.first(where: { $0.state == nil }) {
                return .refused(.missingDependency(missing.id))
            }
            // A dependency that already failed fails the new job at once, as it would have
            // had it been submitted earlier.
            if let failed = firstFailed(context) { return .enter(.finished(.dependencyFailed(failed.id))) }
            return .enter(placement(context))
        case (nil, _), (_, .submit):
            return .refused(.invalid)

        case (.waiting, .promote):
            return placement(context) == .queued ? .enter(.queued) : .unchanged
        case (_, .promote):
            return .unchanged

        case (.queued, .claim):
            if context.held { return .refused(.held) }
            return context.queuePaused ? .refused(.queuePaused) : .enter(.running)
        case (_, .claim):
            return .refused(.invalid)

        case (.running, .releaseClaim):
            return context.processSpawned ? .refused(.invalid) : .enter(.queued)
        case (_, .releaseClaim):
            return .refused(.invalid)

        case (.running, .endAttempt(let result)):
            if RetryPolicy.isRetryable(result) && !context.retriesCancelled && context.attempt < context.maxAttempts {
                return .retryLater(at: context.retryAt)
            }
            return .enter(.finished(result))
        case (_, .endAttempt):
            return .refused(.invalid)

        case (.running, .timeOut):
            return .stop(.timedOut)
        case (_, .timeOut):
            return .unchanged

        case (.waiting, .cancel), (.queued, .cancel):
            return .enter(.finished(.cancelled))
        case (.running, .cancel):
            return .stop(.cancelled)
        case (.finished, .cancel):
            return .refused(.alreadyFinished)

        // Only a waiting job still depends on its dependencies' outcome: a queued one waits
        // again when a dependency is retried (below), and a running or finished one saw them
        // succeed, which a later retry of a dependency does not take back.
        case (.waiting, .failDependency(let dependency)):
            return .enter(.finished(.dependencyFailed(dependency)))
        case (_, .failDependency):
            return .unchanged

        // `--after` promises a start after the dependency succeeded: a queued job has not
        // started, so it waits for the dependency's new attempt as a waiting one does.
        case (.queued, .dependencyRetried):
            return .enter(.waiting)
        case (_, .dependencyRetried):
            return .unchanged

        case (.finished, .retry):
            if let holder = context.uniqueKeyHolder { return .refused(.duplicate(holder.id, uniqueKey: holder.key)) }
            if let missing = context.unsucceededDependencies.first(where: { $0.state == nil }) {
                return .refused(.missingDependency(missing.id))
            }
            if let failed = firstFailed(context) { return .refused(.dependencyNotSucceeded(failed.id, failed.result)) }
            return .enter(placement(context))
        case (_, .retry):
            return .refused(.notFinished)

        case (.finished, .prune):
            return context.hasLiveDependents ? .refused(.dependedOn) : .delete
        case (_, .prune):
            return .refused(.notFinished)

        case (.waiting, .hold), (.queued, .hold):
            return context.held ? .unchanged : .setHeld(true)
        case (.waiting, .release), (.queued, .release):
            return context.held ? .setHeld(false) : .unchanged
        // The new start time (in the context) may make a queued job wait, or a waiting one due.
        case (.waiting, .edit), (.queued, .edit):
            return .enter(placement(context))
        case (.running, .hold), (.running, .release), (.running, .edit):
            return .refused(.alreadyStarted)
        case (.finished, .hold), (.finished, .release), (.finished, .edit),
             (.finished, .suspend), (.finished, .resume):
            return .refused(.alreadyFinished)

        case (.running, .suspend):
            return context.suspended ? .unchanged : .setSuspended(true)
        case (.running, .resume):
            return context.suspended ? .setSuspended(false) : .unchanged
        case (_, .suspend), (_, .resume):
            return .refused(.notRunning)
        }
    }

    /// The first dependency that finished without succeeding.
    private static func firstFailed(_ context: Context) -> (id: JobID, result: JobResult)? {
        for dependency in context.unsucceededDependencies {
            if case .finished(let result)? = dependency.state { return (dependency.id, result) }
        }
        return nil
    }

    /// Where a job with no failed dependency goes: waiting while a dependency is unfinished
    /// or its start time is ahead, else queued.
    private static func placement(_ context: Context) -> JobState {
        if !context.unsucceededDependencies.isEmpty { return .waiting }
        if let notBefore = context.notBefore, notBefore > context.now { return .waiting }
        return .queued
    }
}
