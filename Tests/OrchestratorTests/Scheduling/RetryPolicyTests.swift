import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test("backoff doubles per attempt, stops at the cap, and jitter takes at most half")
    func backoff() {
        let policy = RetryPolicy(base: .seconds(1), cap: .seconds(10))
        #expect(policy.backoff(afterAttempt: 1, random: 1) == .seconds(1))
        #expect(policy.backoff(afterAttempt: 2, random: 1) == .seconds(2))
        #expect(policy.backoff(afterAttempt: 3, random: 1) == .seconds(4))
        #expect(policy.backoff(afterAttempt: 9, random: 1) == .seconds(10), "capped")
        #expect(policy.backoff(afterAttempt: 3, random: 0) == .seconds(2), "jitter keeps at least half")
        #expect(policy.backoff(afterAttempt: 1000, random: 0.5) <= .seconds(10), "no overflow for huge attempt numbers")
    }

    @Test("only results another run could change are retried")
    func retryable() {
        #expect(RetryPolicy.isRetryable(.failed(exitCode: 1)))
        #expect(RetryPolicy.isRetryable(.signaled(signal: 9)))
        #expect(RetryPolicy.isRetryable(.timedOut))
        #expect(RetryPolicy.isRetryable(.interrupted))
        #expect(!RetryPolicy.isRetryable(.succeeded))
        #expect(!RetryPolicy.isRetryable(.cancelled))
        #expect(!RetryPolicy.isRetryable(.spawnFailed(reason: "x")))
        #expect(!RetryPolicy.isRetryable(.dependencyFailed(JobID(rawValue: 1))))
    }
}
