import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Job state machine")
struct JobStateMachineTests {
    typealias Machine = JobStateMachine
    typealias Outcome = JobStateMachine.Outcome

    private static let now = Date(timeIntervalSince1970: 1_800_000_000)
    private static let dependency = JobID(rawValue: 1)

    /// The context with nothing in the way: no dependency, no start time, no key held, the
    /// queue running, the first attempt of one, no process spawned, no dependents.
    private static var neutral: Machine.Context {
        var context = Machine.Context(now: now)
        context.attempt = 1
        context.maxAttempts = 1
        context.retryAt = now.addingTimeInterval(10)
        return context
    }

    /// Every state a job can be in: not stored yet, the three live states, and finished with
    /// each result.
    private static let states: [JobState?] = [nil, .waiting, .queued, .running] + [
        JobResult.succeeded, .failed(exitCode: 1), .signaled(signal: 9), .timedOut, .cancelled,
        .spawnFailed(reason: "x"), .dependencyFailed(JobID(rawValue: 9)), .interrupted,
    ].map { JobState.finished($0) }

    /// The expected outcome of every operation in every state, with the neutral context. A
    /// finished job's row is the same whatever its result.
    private static func expected(_ state: JobState?) -> [Machine.Operation: Outcome] {
        let invalid = Outcome.refused(.invalid)
        switch state {
        case nil:
            return [
                .submit: .enter(.queued), .promote: invalid, .claim: invalid, .releaseClaim: invalid,
                .endAttempt(.failed(exitCode: 1)): invalid, .endAttempt(.succeeded): invalid, .timeOut: invalid,
                .cancel: invalid, .failDependency(dependency): invalid, .retry: invalid, .dependencyRetried: invalid, .prune: invalid,
                .hold: invalid, .release: invalid, .edit: invalid, .suspend: invalid, .resume: invalid,
            ]
        case .waiting?:
            return [
                .submit: invalid, .promote: .enter(.queued), .claim: invalid, .releaseClaim: invalid,
                .endAttempt(.failed(exitCode: 1)): invalid, .endAttempt(.succeeded): invalid, .timeOut: .unchanged,
                .cancel: .enter(.finished(.cancelled)), .failDependency(dependency): .enter(.finished(.dependencyFailed(dependency))),
                .retry: .refused(.notFinished), .dependencyRetried: .unchanged, .prune: .refused(.notFinished),
                .hold: .setHeld(true), .release: .unchanged, .edit: .enter(.queued), .suspend: .refused(.notRunning),
                .resume: .refused(.notRunning),
            ]
        case .queued?:
            return [
                .submit: invalid, .promote: .unchanged, .claim: .enter(.running), .releaseClaim: invalid,
                .endAttempt(.failed(exitCode: 1)): invalid, .endAttempt(.succeeded): invalid, .timeOut: .unchanged,
                .cancel: .enter(.finished(.cancelled)), .failDependency(dependency): .unchanged,
                .retry: .refused(.notFinished), .dependencyRetried: .enter(.waiting), .prune: .refused(.notFinished),
                .hold: .setHeld(true), .release: .unchanged, .edit: .enter(.queued), .suspend: .refused(.notRunning),
                .resume: .refused(.notRunning),
            ]
        case .running?:
            return [
                .submit: invalid, .promote: .unchanged, .claim: invalid, .releaseClaim: .enter(.queued),
                .endAttempt(.failed(exitCode: 1)): .enter(.finished(.failed(exitCode: 1))),
                .endAttempt(.succeeded): .enter(.finished(.succeeded)), .timeOut: .stop(.timedOut),
                .cancel: .stop(.cancelled), .failDependency(dependency): .unchanged,
                .retry: .refused(.notFinished), .dependencyRetried: .unchanged, .prune: .refused(.notFinished),
                .hold: .refused(.alreadyStarted), .release: .refused(.alreadyStarted), .edit: .refused(.alreadyStarted),
                .suspend: .setSuspended(true), .resume: .unchanged,
            ]
        case .finished?:
            return [
                .submit: invalid, .promote: .unchanged, .claim: invalid, .releaseClaim: invalid,
                .endAttempt(.failed(exitCode: 1)): invalid, .endAttempt(.succeeded): invalid, .timeOut: .unchanged,
                .cancel: .refused(.alreadyFinished), .failDependency(dependency): .unchanged,
                .retry: .enter(.queued), .dependencyRetried: .unchanged, .prune: .delete,
                .hold: .refused(.alreadyFinished), .release: .refused(.alreadyFinished), .edit: .refused(.alreadyFinished),
                .suspend: .refused(.alreadyFinished), .resume: .refused(.alreadyFinished),
            ]
        }
    }

    @Test("every (state, operation) pair has the outcome of the table", arguments: states)
    func table(state: JobState?) {
        let row = Self.expected(state)
        #expect(Set(row.keys) == Set(Machine.Operation.all), "the table covers every operation")
        for operation in Machine.Operation.all {
            let outcome = Machine.decide(state, operation, Self.neutral)
            #expect(outcome == row[operation], "\(Self.label(state)) + \(operation)")
        }
    }

    private static func label(_ state: JobState?) -> String {
        guard let state else { return "none" }
        return state.result.map { "finished(\($0.name))" } ?? state.name
    }

    // MARK: - The context decides

    private static func context(
        dependencies: [(JobID, JobState?)] = [], notBefore: Date? = nil, holder: JobID? = nil
    ) -> Machine.Context {
        var context = neutral
        context.unsucceededDependencies = dependencies.map { (id: $0.0, state: $0.1) }
        context.notBefore = notBefore
        context.uniqueKeyHolder = holder.map { (id: $0, key: "k") }
        return context
    }

    private static let live = JobID(rawValue: 2)
    private static let failed = JobID(rawValue: 3)
    private static let pruned = JobID(rawValue: 4)

    @Test("submit: a failed dependency fails the job, an unfinished one or a later start makes it wait; unknown IDs and held keys are refused")
    func submit() {
        func decide(_ context: Machine.Context) -> Outcome { Machine.decide(nil, .submit, context) }
        #expect(decide(Self.context(dependencies: [(Self.live, .running)])) == .enter(.waiting))
        #expect(decide(Self.context(notBefore: Self.now.addingTimeInterval(1))) == .enter(.waiting))
        #expect(decide(Self.context(notBefore: Self.now)) == .enter(.queued), "a start time that has come")
        #expect(decide(Self.context(dependencies: [(Self.live, .queued), (Self.failed, .finished(.cancelled))]))
            == .enter(.finished(.dependencyFailed(Self.failed))), "a failed dependency wins over an unfinished one")
        #expect(decide(Self.context(dependencies: [(Self.pruned, nil)])) == .refused(.missingDependency(Self.pruned)))
        #expect(decide(Self.context(dependencies: [(Self.live, .waiting)], holder: Self.live))
            == .refused(.duplicate(Self.live, uniqueKey: "k")))
    }

    @Test("retry: waits for unfinished dependencies and a later start; refused for a failed, cancelled or pruned dependency and a held key",
          arguments: [JobResult.succeeded, .failed(exitCode: 2), .cancelled, .dependencyFailed(JobID(rawValue: 7))])
    func retry(result: JobResult) {
        let state = JobState.finished(result)
        func decide(_ context: Machine.Context) -> Outcome { Machine.decide(state, .retry, context) }
        #expect(decide(Self.neutral) == .enter(.queued))
        for dependencyState in [JobState.waiting, .queued, .running] {
            #expect(decide(Self.context(dependencies: [(Self.live, dependencyState)])) == .enter(.waiting))
        }
        #expect(decide(Self.context(notBefore: Self.now.addingTimeInterval(60))) == .enter(.waiting))
        #expect(decide(Self.context(notBefore: Self.now.addingTimeInterval(-60))) == .enter(.queued))
        for failure in [JobResult.failed(exitCode: 1), .cancelled, .dependencyFailed(Self.pruned), .timedOut] {
            #expect(decide(Self.context(dependencies: [(Self.live, .running), (Self.failed, .finished(failure))]))
                == .refused(.dependencyNotSucceeded(Self.failed, failure)))
        }
        #expect(decide(Self.context(dependencies: [(Self.pruned, nil)])) == .refused(.missingDependency(Self.pruned)))
        #expect(decide(Self.context(holder: Self.live)) == .refused(.duplicate(Self.live, uniqueKey: "k")))
    }

    @Test("promote: only when every dependency succeeded and the start time has come")
    func promote() {
        func decide(_ context: Machine.Context) -> Outcome { Machine.decide(.waiting, .promote, context) }
        #expect(decide(Self.context(dependencies: [(Self.live, .running)])) == .unchanged)
        #expect(decide(Self.context(dependencies: [(Self.failed, .finished(.failed(exitCode: 1)))])) == .unchanged,
                "failDependency, not promote, settles it")
        #expect(decide(Self.context(notBefore: Self.now.addingTimeInterval(1))) == .unchanged)
        #expect(decide(Self.context(notBefore: Self.now)) == .enter(.queued))
    }

    @Test("claim is refused in a paused queue; a claim is given back only when no process was spawned")
    func claimAndRelease() {
        var paused = Self.neutral
        paused.queuePaused = true
        #expect(Machine.decide(.queued, .claim, paused) == .refused(.queuePaused))
        var spawned = Self.neutral
        spawned.processSpawned = true
        #expect(Machine.decide(.running, .releaseClaim, spawned) == .refused(.invalid))
    }

    @Test("an attempt that ended is retried only when its result allows it, attempts remain and no cancel came",
          arguments: [
            (JobResult.failed(exitCode: 1), true), (.signaled(signal: 9), true), (.timedOut, true), (.interrupted, true),
            (.succeeded, false), (.cancelled, false), (.spawnFailed(reason: "x"), false),
            (.dependencyFailed(JobID(rawValue: 1)), false),
          ])
    func endAttempt(result: JobResult, retryable: Bool) {
        var context = Self.neutral
        context.maxAttempts = 3
        for attempt in 1...3 {
            context.attempt = attempt
            let expected: Outcome = retryable && attempt < 3 ? .retryLater(at: context.retryAt) : .enter(.finished(result))
            #expect(Machine.decide(.running, .endAttempt(result), context) == expected, "attempt \(attempt) of 3")
            // A cancel that came while the attempt was torn down leaves no retry.
            var cancelled = context
            cancelled.retriesCancelled = true
            #expect(Machine.decide(.running, .endAttempt(result), cancelled) == .enter(.finished(result)))
        }
    }

    @Test("a finished job a live job depends on is not pruned")
    func pruneDependedOn() {
        var context = Self.neutral
        context.hasLiveDependents = true
        #expect(Machine.decide(.finished(.succeeded), .prune, context) == .refused(.dependedOn))
    }

    @Test("hold and release flip the held flag of a job that has not started; a held job is not claimed")
    func holdAndRelease() {
        var held = Self.neutral
        held.held = true
        for state in [JobState.waiting, .queued] {
            #expect(Machine.decide(state, .hold, held) == .unchanged, "holding a held job changes nothing")
            #expect(Machine.decide(state, .release, held) == .setHeld(false))
        }
        #expect(Machine.decide(.queued, .claim, held) == .refused(.held))
    }

    @Test("edit places the job by its new start time; suspend and continue flip the suspended flag")
    func editAndSuspend() {
        #expect(Machine.decide(.queued, .edit, Self.context(notBefore: Self.now.addingTimeInterval(60))) == .enter(.waiting))
        #expect(Machine.decide(.waiting, .edit, Self.context(notBefore: Self.now)) == .enter(.queued))
        #expect(Machine.decide(.waiting, .edit, Self.context(dependencies: [(Self.live, .running)])) == .enter(.waiting),
                "an unfinished dependency still holds it")
        var suspended = Self.neutral
        suspended.suspended = true
        #expect(Machine.decide(.running, .suspend, suspended) == .unchanged)
        #expect(Machine.decide(.running, .resume, suspended) == .setSuspended(false))
    }
}
