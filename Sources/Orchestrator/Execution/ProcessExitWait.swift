import CPosix
import Glibc

/// A blocking wait for processes to exit, woken by the exits themselves: each process's pidfd
/// becomes readable once it has exited (pidfd_open(2), for any process, not only a child), and
/// poll(2) waits on all of them. For the paths that may block a thread: start-up recovery, and
/// the daemon's last moments, when nothing else is served.
enum ProcessExitWait {
    /// Blocks until every one of `pids` has exited (a zombie counts) or `deadline` has passed.
    /// - Parameters:
    ///   - pids: the processes; one already gone counts as exited.
    ///   - deadline: when to stop waiting.
    /// - Returns: whether every one was watched and exited; `false` at the deadline, or when
    ///   one could not be watched (no descriptor left: pidfd_open's `EMFILE`), after the others
    ///   exited.
    static func untilExited(_ pids: [Int32], deadline: ContinuousClock.Instant) -> Bool {
        var watchedAll = true
        var descriptors = pids.compactMap { pid -> pollfd? in
            let pidfd = cposix_pidfd_open(pid)
            guard pidfd >= 0 else {
                if errno != ESRCH { watchedAll = false }
                return nil
            }
            return pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        }
        defer { descriptors.forEach { close($0.fd) } }
        while !descriptors.isEmpty {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            // Rounded up, so that a wait never ends just before its deadline; at most a
            // minute at a time.
            let milliseconds = Int32(min(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            guard poll(&descriptors, nfds_t(descriptors.count), milliseconds) >= 0 || errno == EINTR else { return false }
            for exited in descriptors where exited.revents != 0 { close(exited.fd) }
            descriptors.removeAll { $0.revents != 0 }
        }
        return watchedAll
    }
}
