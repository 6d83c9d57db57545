import Dispatch
import Synchronization

/// Counts the calls being handled (all but those that may wait indefinitely: a wait, a
/// followed stream) from their dispatch until their final reply has been handed to their
/// connection, so that a stop can wait for every such reply before the connections close.
///
/// A change acknowledged must reach its client: a submit stored, or a cancel carried out,
/// whose reply is lost leaves a client told that the connection closed, which may then
/// submit the job again. Counting beats reasoning about turns of the control queue: a stored
/// job's reply reaches its connection only after its task resumed in the actor and again on
/// the request executor, and under load those resumptions were seen to come after later
/// work of the same queue.
public final class UnansweredRequests: Sendable {
    private struct State {
        var count = 0
        var closed = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// Creates a tracker with nothing outstanding.
    public init() {}

    /// The number of requests not yet answered.
    public var count: Int { state.withLock { $0.count } }

    /// Notes a call about to be handled; ``answered()`` must follow exactly once.
    /// - Returns: `false`, counting nothing, once ``closeAndWait(timeout:)`` was called: the
    ///   call must then be refused without changing anything, as its reply may not get out.
    public func begin() -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.count += 1
            return true
        }
    }

    /// Notes that a request's reply (or error) was handed to its connection.
    public func answered() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Takes no more calls (``begin()`` refuses from now on) and returns once none is
    /// outstanding, or after `timeout`, whichever comes first.
    /// - Parameter timeout: the longest wait (a call stuck for longer must not keep orchd
    ///   from stopping).
    /// - Returns: whether every call was answered.
    @discardableResult
    public func closeAndWait(timeout: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiter = state.withLock { state -> Int? in
                state.closed = true
                guard state.count > 0 else { return nil }
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let waiter else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval) { [self] in
                // Still there only if no answer emptied the count meanwhile.
                state.withLock { $0.waiters.removeValue(forKey: waiter) }?.resume()
            }
        }
        return count == 0
    }
}
