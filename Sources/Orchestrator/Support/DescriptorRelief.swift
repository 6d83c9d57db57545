import Glibc
import Synchronization

/// Where a part of orchd that ran out of file descriptors asks for some back.
///
/// The daemon points ``process`` at the control socket's idle connections
/// (``VarlinkServer/closeIdleConnections(minimumIdleNanoseconds:limit:logging:)``): they are what local users can pile up. A
/// failing accept closes them itself, but once every pending connection is accepted nothing
/// else would, and whatever waits for a descriptor would wait on them for ever: a launch
/// (``LocalExecutor``), the WAL file's reopening (``GroupCommit``).
final class DescriptorRelief: Sendable {
    /// The process's: descriptors are a per-process resource, whoever runs out of them.
    static let process = DescriptorRelief(minimumInterval: .milliseconds(100))

    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    /// Asks closer together than the minimum interval do nothing, so a loop that keeps failing
    /// does not keep scanning the connections.
    private let spacing: RateLimiter

    /// Creates a relief with no handler.
    /// - Parameter minimumInterval: the shortest time between two runs of the handler.
    init(minimumInterval: Duration = .zero) {
        spacing = RateLimiter(interval: minimumInterval)
    }

    /// Sets what ``ask()`` runs; it runs on the caller's thread and must not block.
    func setHandler(_ handler: @escaping @Sendable () -> Void) {
        self.handler.withLock { $0 = handler }
    }

    /// Asks for descriptors back; nothing happens before a handler is set.
    func ask() {
        guard let handler = handler.withLock({ $0 }), spacing.allows() else { return }
        handler()
    }

    /// The process's soft `RLIMIT_NOFILE` (getrlimit(2)): how many descriptors it may have
    /// open, by number; `nil` when unlimited or unreadable.
    static func softLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }
}
