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
    private let source: RetainedSource<any DispatchSourceSignal>
    /// Whether a scan is scheduled and has not started.
    private let scanScheduled = Mutex(false)
    /// How long after a SIGCHLD the scan runs; later SIGCHLDs meanwhile share it.
    static let scanDelay = DispatchTimeInterval.milliseconds(100)

    /// Becomes a subreaper and starts reaping on SIGCHLD. SIGCHLD must be blocked in every
    /// thread (``Daemon/prepareSignals(arguments:)``) for the dispatch source to receive it.
    /// - Returns: `nil` when the kernel refuses to make the daemon a subreaper.
    public init?(queue: DispatchQueue) {
        guard cposix_set_child_subreaper() == 0 else {
            DaemonLog.warning("cannot become a child subreaper: \(String(cString: strerror(errno)))")
            return nil
        }
        let source = DispatchSource.makeSignalSource(signal: SIGCHLD, queue: queue)
        self.source = RetainedSource(source: source)
        source.setEventHandler { [weak self] in self?.scheduleScan(on: queue) }
        source.resume()
        // Children that ended before the source existed.
        queue.async { Self.reapOrphans() }
    }

    private func scheduleScan(on queue: DispatchQueue) {
        guard !scanScheduled.withLock({ scheduled in defer { scheduled = true }; return scheduled }) else { return }
        queue.asyncAfter(deadline: .now() + Self.scanDelay) { [weak self] in
            self?.scanScheduled.withLock { $0 = false }
            Self.reapOrphans()
        }
    }

    /// Stops reaping.
    public func stop() {
        source.source.cancel()
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
