import CPosix
import Dispatch
import Synchronization

/// Gives memory freed after a burst of work back to the kernel, so a daemon that once
/// decoded a large batch does not keep its peak RSS for the rest of its life.
///
/// glibc keeps freed heap memory in its arenas; malloc_trim(3) returns it. Called after each
/// group commit, it trims at most once per ``interval``, on a utility queue, after the burst.
final class MemoryTrimmer: Sendable {
    static let shared = MemoryTrimmer()
    /// The shortest time between two trims.
    let interval: DispatchTimeInterval = .seconds(2)
    private let scheduled = Atomic<Bool>(false)

    /// Caps glibc's arenas at two: the daemon's many dispatch threads would otherwise each
    /// keep their own pool of freed memory.
    static func limitArenas() {
        _ = cposix_set_malloc_arena_max(2)
    }

    /// Trims once the current burst is over (coalesced: at most one trim per interval).
    func trimSoon() {
        guard scheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + interval) { [self] in
            scheduled.store(false, ordering: .relaxed)
            _ = cposix_malloc_trim()
        }
    }
}
