import OrchestratorAPI

/// When a failed attempt is retried, and after how long: exponential backoff with jitter.
///
/// The n-th retry waits `base × 2^(n-1)`, capped at `cap`, then a uniformly random part of
/// its second half is taken away ("equal jitter"), so retries of many jobs that failed
/// together spread out instead of starting in lockstep.
public struct RetryPolicy: Hashable, Sendable {
    /// Backoff before the first retry.
    public var base: Duration
    /// The longest backoff.
    public var cap: Duration

    /// The defaults when a queue sets none: 1 s doubling up to 5 min.
    public static let standard = RetryPolicy(base: .seconds(1), cap: .seconds(300))

    /// Creates a value with every field given.
    public init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = cap
    }

    /// Whether an attempt that ended so is worth another: failures, signals, timeouts and
    /// interruptions are; success, cancellation, a missing command and a failed dependency
    /// are not (another run could not change them).
    public static func isRetryable(_ result: JobResult) -> Bool {
        switch result {
        case .failed, .signaled, .timedOut, .interrupted: true
        case .succeeded, .cancelled, .spawnFailed, .dependencyFailed: false
        }
    }

    /// The wait before retrying after attempt number `attempt` (from 1).
    /// - Parameter random: a number in 0..<1 choosing the jitter (injected for tests).
    public func backoff(afterAttempt attempt: Int, random: Double = Double.random(in: 0..<1)) -> Duration {
        let exponent = min(max(attempt - 1, 0), 40)
        let full = min(base * (1 << exponent), cap)
        let half = full / 2
        return half + half * random
    }
}
