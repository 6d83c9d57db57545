import CPosix
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Makes the daemon a child subreaper (`PR_SET_CHILD_SUBREAPER`, prctl(2)) and reaps the
/// orphans it inherits, so a job's background processes that outlive it never pile up as
/// zombies.
///
/// Orphans are found on SIGCHLD by listing the daemon's children
/// (`/proc/self/task/*/children`, proc_pid_task(5)) and reaping, one pid at a time, each that
/// is not one of ours (``SpawnedProcesses``). No `waitpid(-1)`: that could take a job's status
/// from its pidfd watcher. A scan runs at most once per ``scanDelay`` however many children
/// end: nearly every SIGCHLD is a job's own end, orphans are rare, and a zombie waiting that
/// long harms nothing (a scan per job end was a tenth of orchd's work per short job).
public final class OrphanReaper: Sendable {
    /// How the daemon learns of SIGCHLD: a signalfd, or, when none could be made, a timer.
    private enum Trigger {
        case signals(EpollLoop.Watch, fd: Int32)
        case polling(RetainedSource<any DispatchSourceTimer>)
    }
    private let trigger: Trigger
    /// How long after a SIGCHLD the scan runs; later SIGCHLDs meanwhile share it.
    static let scanDelay = DispatchTimeInterval.milliseconds(100)
    /// How often the daemon scans when it cannot receive SIGCHLD.
    static let pollInterval = DispatchTimeInterval.seconds(1)

    /// Becomes a subreaper and starts reaping on SIGCHLD. SIGCHLD must be blocked in every
    /// thread (``Daemon/prepareSignals(arguments:)``) for the signalfd to receive it.
    ///
    /// The signalfd is read on ``EpollLoop``'s own thread, which nearly every SIGCHLD wakes
    /// anyway (a job's end makes its pidfd readable at the same moment): a dispatch signal
    /// source cost each job's end two more thread wake-ups (libdispatch's manager thread, then
    /// this queue's), a fifth of the daemon's context switches per short job.
    /// - Parameter queue: where the scans run.
    /// - Returns: `nil` when the kernel refuses to make the daemon a subreaper.
    public init?(queue: DispatchQueue) {
        guard cposix_set_child_subreaper() == 0 else {
            DaemonLog.warning("cannot become a child subreaper: \(String(cString: strerror(errno)))")
            return nil
        }
        let fd = cposix_signalfd_sigchld()
        if fd >= 0 {
            let scans = DelayedScans(queue: queue)
            let watch = EpollLoop.shared.watch(fd, for: .readable, on: nil) { _, _ in
                guard cposix_signalfd_drain(fd) != 0 else { return }
                scans.request()
            }
            trigger = .signals(watch, fd: fd)
        } else {
            // Out of descriptors at start-up: orphans are still reaped, a little later.
            DaemonLog.warning("cannot receive SIGCHLD (signalfd: \(String(cString: strerror(errno)))); looking for exited orphans every \(Self.pollInterval)")
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
            timer.setEventHandler { Self.reapOrphans() }
            timer.activate()
            trigger = .polling(RetainedSource(source: timer))
        }
        // Children that ended before the signalfd existed.
        queue.async { Self.reapOrphans() }
    }

    /// Runs one scan ``scanDelay`` after a request, for all requests made meanwhile.
    private final class DelayedScans: Sendable {
        private let queue: DispatchQueue
        /// A scan is scheduled and has not started.
        private let scheduled = Atomic(false)

        init(queue: DispatchQueue) { self.queue = queue }

        func request() {
            guard !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
            queue.asyncAfter(deadline: .now() + OrphanReaper.scanDelay) { [self] in
                scheduled.store(false, ordering: .releasing)
                OrphanReaper.reapOrphans()
            }
        }
    }

    /// Stops reaping.
    public func stop() {
        switch trigger {
        case .signals(let watch, let fd): watch.cancel { close(fd) }
        case .polling(let timer): timer.source.cancel()
        }
    }

    /// Reaps every exited child that is not one of the daemon's own jobs: now, or the part a
    /// spawn under way could own once that spawn has settled (``SpawnedProcesses``).
    /// - Returns: how many were reaped now.
    @discardableResult
    static func reapOrphans() -> Int {
        SpawnedProcesses.registry.withLock { registry in
            reap(registry.orphansToReap(among: children()))
        }
    }

    /// Reaps each of `pids` that has exited (children none of our watchers waits for).
    /// - Returns: how many were reaped.
    @discardableResult
    static func reap(_ pids: [Int32]) -> Int {
        var reaped = 0
        for pid in pids {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { reaped += 1 }
        }
        return reaped
    }

    /// The daemon's children, from every thread's `children` file.
    static func children() -> [Int32] {
        ProcessTree.children(of: "self")
    }
}
