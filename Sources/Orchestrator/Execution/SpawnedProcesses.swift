import Synchronization

/// The children this daemon spawned and reaps itself (by pidfd). The ``OrphanReaper`` leaves
/// these alone and reaps every other child: orphaned grandchildren handed to us as the child
/// subreaper.
///
/// ``ProcessLauncher`` inserts a pid under the same lock as the clone3(2) that creates it,
/// so the orphan reaper can never see one of our own children before it is registered.
enum SpawnedProcesses {
    static let pids = Mutex<Set<Int32>>([])

    /// Forgets a child once it was reaped.
    static func reaped(_ pid: Int32) {
        _ = pids.withLock { $0.remove(pid) }
    }
}
