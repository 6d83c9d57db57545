import CPosix
import Dispatch
import Foundation
import Synchronization

/// Reaps child processes through their pidfds, one ``EpollLoop`` watch per child.
///
/// A pidfd becomes readable when its process exits (pidfd_open(2)); the reaper then reaps
/// that one process with `waitid(P_PIDFD, …, WEXITED)` (waitid(2)), so no zombie remains, no
/// thread waits per child, and no `waitpid(-1)` steals another part's status. The pidfd is
/// closed once its watch is cancelled.
public final class ChildReaper: Sendable {
    /// Creates a reaper.
    public init() {}


    /// Watches `process` and reaps it when it exits.
    ///
    /// - Parameters:
    ///   - process: a child of this process; the reaper takes ownership of its `pidfd`.
    ///   - queue: where `onExit` runs (and, unless `entersQueueDirectly`, the reaping).
    ///   - entersQueueDirectly: the reaping runs on ``EpollLoop``'s thread, which then runs
    ///     `onExit` itself inside `queue` (`DispatchQueue.sync`): when the queue is idle, as
    ///     a job's own queue nearly always is, no other thread is woken for the exit. Only for
    ///     a queue whose work never waits on anything (the loop's other watches wait while it
    ///     runs); `false`: the reaping and `onExit` run as a turn of `queue`.
    ///   - onExit: called once, on `queue`, with how the process ended. If someone else
    ///     reaped the child first (a stray `waitpid(-1)`), the status is lost: `onExit` gets
    ///     `.exited(-1)`.
    public func watch(
        _ process: LaunchedProcess,
        on queue: DispatchQueue,
        entersQueueDirectly: Bool = false,
        onExit: @escaping @Sendable (TerminationStatus) -> Void
    ) {
        let pidfd = process.pidfd
        let pid = process.pid
        // The watch's handler never runs twice at once and never after its cancellation, so
        // the exit is reported once.
        _ = EpollLoop.shared.watch(pidfd, for: .readable, on: entersQueueDirectly ? nil : queue) { watch, _ in
            // Reaped and forgotten under one lock, so a new child that reuses the pid at once
            // is never dropped from the registry by mistake.
            let reaped = SpawnedProcesses.registry.withLock { registry -> TerminationStatus? in
                guard let status = Self.reap(pidfd: pidfd) else { return nil }
                registry.pids.remove(pid)
                return status
            }
            guard let status = reaped else { return }
            watch.cancel { close(pidfd) }
            if entersQueueDirectly {
                queue.sync { onExit(status) }
            } else {
                onExit(status)
            }
        }
    }

    /// Reaps the process behind `pidfd` if it has exited.
    /// - Returns: its status, or `nil` when it is still running (a spurious wake-up).
    private static func reap(pidfd: Int32) -> TerminationStatus? {
        var code: Int32 = 0
        var status: Int32 = 0
        while cposix_waitid_pidfd(pidfd, cposix_wnohang(), &code, &status) != 0 {
            if errno == EINTR { continue }
            return .exited(-1)
        }
        switch code {
        case 0: return nil
        case Int32(CLD_EXITED): return .exited(status)
        default: return .signaled(status)  // CLD_KILLED or CLD_DUMPED
        }
    }
}
