import Dispatch
import Glibc
import Synchronization

/// Where a part of orchd that ran out of file descriptors asks for some back.
///
/// The daemon points ``process`` at the control socket's idle connections
/// (``VarlinkServer/closeIdleConnections(logging:)``): they are what local users can pile up. A
/// failing accept closes them itself, but once every pending connection is accepted nothing
/// else would, and whatever waits for a descriptor would wait on them for ever: a launch
/// (``LocalExecutor``), the WAL file's reopening (``GroupCommit``).
final class DescriptorRelief: Sendable {
    /// The process's: descriptors are a per-process resource, whoever runs out of them.
    static let process = DescriptorRelief(minimumInterval: .milliseconds(100))

    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    /// When the handler last ran (`DispatchTime` uptime, nanoseconds); asks closer together
    /// than ``minimumInterval`` do nothing, so a loop that keeps failing does not keep scanning
    /// the connections.
    private let lastAsked = Atomic<UInt64>(0)
    private let minimumInterval: UInt64

    /// Creates a relief with no handler.
    /// - Parameter minimumInterval: the shortest time between two runs of the handler.
    init(minimumInterval: Duration = .zero) {
        let (seconds, attoseconds) = minimumInterval.components
        self.minimumInterval = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Sets what ``ask()`` runs; it runs on the caller's thread and must not block.
    func setHandler(_ handler: @escaping @Sendable () -> Void) {
        self.handler.withLock { $0 = handler }
    }

    /// Asks for descriptors back; nothing happens before a handler is set. `errno` is kept.
    func ask() {
        guard let handler = handler.withLock({ $0 }) else { return }
        let code = errno
        defer { errno = code }
        let now = DispatchTime.now().uptimeNanoseconds
        let last = lastAsked.load(ordering: .relaxed)
        guard last == 0 || now &- last >= minimumInterval,
              lastAsked.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return }
        handler()
    }
}
