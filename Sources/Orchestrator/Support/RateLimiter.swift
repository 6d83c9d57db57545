import Dispatch
import Synchronization

/// Lets something happen at most once per interval, from any thread: a log line or a scan that
/// a loop under pressure would otherwise repeat many times a second.
final class RateLimiter: Sendable {
    private let intervalNanoseconds: UInt64
    /// When it was last let through (`DispatchTime` uptime, nanoseconds); 0 never.
    private let last = Atomic<UInt64>(0)

    /// Creates a limiter that lets the first call through.
    /// - Parameter interval: the shortest time between two calls let through; zero lets every
    ///   call through.
    init(interval: Duration) {
        let (seconds, attoseconds) = interval.components
        intervalNanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Whether this call may go ahead: the first, or the first at least an interval after the
    /// last one let through. Of calls racing for one slot, one wins.
    func allows() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        let previous = last.load(ordering: .relaxed)
        guard previous == 0 || now &- previous >= intervalNanoseconds else { return false }
        return last.compareExchange(expected: previous, desired: now, ordering: .relaxed).exchanged
    }
}
