import CPosix
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Tells when cgroups become empty, with one inotify(7) fd for the whole daemon.
///
/// The kernel signals every change of a cgroup's `cgroup.events` as `IN_MODIFY` (kernel
/// cgroup-v2.rst, "populated"); one ``EpollLoop`` watch on the inotify fd reads them, and each
/// watched cgroup is re-checked (``Cgroup/isPopulated``) only when its own file changed. No
/// polling.
public final class CgroupWatcher: Sendable {
    private struct Watch: Sendable {
        let cgroup: Cgroup
        var handlers: [(queue: DispatchQueue, onEmpty: @Sendable () -> Void)]
    }

    private let fd: Int32
    private let queue = DispatchQueue(label: "orchd.cgroup-events")
    /// Set once in `init`; a box because its handler needs `self`.
    private let readiness = LockedBox<EpollLoop.Watch?>(nil)
    /// By inotify watch descriptor. Used on `queue` only; the lock makes that checkable.
    private let watches = Mutex<[Int32: Watch]>([:])

    /// How soon a `cgroup.events` that could not be read (out of descriptors) is read again.
    static let unreadableRetry = DispatchTimeInterval.milliseconds(100)

    /// Opens the inotify fd and starts reading it.
    /// - Throws: ``Containment/SetupError`` when inotify_init1(2) fails (e.g. `EMFILE`).
    public init() throws(Containment.SetupError) {
        fd = cposix_inotify_init()
        guard fd >= 0 else { throw Containment.SetupError("cannot watch cgroups: inotify_init1: \(LaunchError.describe(errno))") }
        readiness.value = EpollLoop.shared.watch(fd, for: .readable, on: queue) { [weak self] _, _ in self?.readEvents() }
    }

    deinit {
        readiness.value?.cancel { [fd] in close(fd) }
    }

    /// Calls `onEmpty` once, on `queue`, as soon as `cgroup` has no live process (at once when
    /// it has none now, or no longer exists).
    /// - Parameters:
    ///   - cgroup: the cgroup to watch.
    ///   - queue: where `onEmpty` runs.
    ///   - onEmpty: called exactly once.
    public func whenEmpty(_ cgroup: Cgroup, on queue: DispatchQueue, _ onEmpty: @escaping @Sendable () -> Void) {
        self.queue.async { [self] in
            let wd = cposix_inotify_watch_modify(fd, cgroup.path + "/cgroup.events")
            guard wd >= 0 else {
                // Gone already (ENOENT), or out of inotify watches: nothing left to wait for,
                // or no way to wait; do not hold the job for ever.
                if errno != ENOENT {
                    DaemonLog.error("cannot watch \(cgroup.path)/cgroup.events: \(LaunchError.describe(errno)); not waiting for it to empty")
                }
                queue.async(execute: onEmpty)
                return
            }
            watches.withLock { $0[wd, default: Watch(cgroup: cgroup, handlers: [])].handlers.append((queue, onEmpty)) }
            // Checked after the watch exists, so an emptying in between is never missed.
            check(wd)
        }
    }

    private func readEvents() {
        var wds = [Int32](repeating: 0, count: 256)
        let count = Int(cposix_inotify_read_wds(fd, &wds, Int32(wds.count)))
        guard count > 0 else { return }
        // More events than room for their wds: check every watch rather than miss one.
        let changed = count > wds.count ? watches.withLock { Array($0.keys) } : Array(Set(wds[0..<count]))
        for wd in changed { check(wd) }
    }

    /// Delivers and forgets the watch when its cgroup is empty.
    private func check(_ wd: Int32) {
        guard let watch = watches.withLock({ $0[wd] }) else { return }
        guard let populated = watch.cgroup.populatedIfReadable else {
            // Out of descriptors: the change that woke us may be the last one, so look again
            // shortly instead of waiting for another.
            queue.asyncAfter(deadline: .now() + Self.unreadableRetry) { [weak self] in self?.check(wd) }
            return
        }
        guard !populated else { return }
        // Only `queue` removes watches, so the one just checked is still there.
        watches.withLock { $0[wd] = nil }
        _ = cposix_inotify_remove(fd, wd)
        for handler in watch.handlers { handler.queue.async(execute: handler.onEmpty) }
    }
}
