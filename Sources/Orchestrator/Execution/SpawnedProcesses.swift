import Synchronization

/// The children this daemon spawned and reaps itself (by pidfd). The ``OrphanReaper`` leaves
/// these alone and reaps every other child: orphaned grandchildren handed to us as the child
/// subreaper.
///
/// A child exists before its pid is known, so ``register(_:)`` counts each spawn under way,
/// and an orphan scan that finds one is left to the spawn that settles last, which runs it
/// under the same lock the moment no spawn is under way: the scan can never see one of our
/// own children before it is registered, and a steady stream of spawns never starves it. The
/// lock is not held across the spawn itself: with `CLONE_VFORK` that lasts until the child's
/// `execve`, and holding it made concurrent spawns wait for each other and the reaper of an
/// ended job spin for the lock.
enum SpawnedProcesses {
    struct Registry {
        /// Our children, spawned and not yet reaped.
        var pids: Set<Int32> = []
        /// Spawns under way: their child may exist without being in ``pids`` yet.
        var spawning = 0
        /// An orphan scan found a spawn under way; the last spawn to settle runs it.
        var orphanScanWaiting = false

        /// Counts a spawn in, before its child can exist.
        mutating func spawnBegan() {
            spawning += 1
        }

        /// Registers the spawn's child (`nil`: it made none) and counts the spawn out.
        /// - Returns: whether a waiting orphan scan is due now (this was the last spawn).
        mutating func spawnSettled(child pid: Int32?) -> Bool {
            if let pid { pids.insert(pid) }
            spawning -= 1
            guard spawning == 0 && orphanScanWaiting else { return false }
            orphanScanWaiting = false
            return true
        }

        /// Whether an orphan scan may run now; when not (a spawn is under way), it waits for
        /// the last spawn to settle.
        mutating func orphanScanMayRun() -> Bool {
            if spawning == 0 { return true }
            orphanScanWaiting = true
            return false
        }
    }

    static let registry = Mutex(Registry())

    /// Runs `spawn`, which creates at most one child and returns 0 with its pid (else an
    /// error number), and registers that child before any orphan scan can look for it.
    /// - Returns: what `spawn` returned.
    static func register(_ spawn: () -> (result: Int32, pid: Int32)) -> Int32 {
        registry.withLock { $0.spawnBegan() }
        let (result, pid) = spawn()
        registry.withLock { registry in
            if registry.spawnSettled(child: result == 0 ? pid : nil) {
                OrphanReaper.reapUnregisteredChildren(registry)
            }
        }
        return result
    }

    /// Forgets a child once it was reaped.
    static func reaped(_ pid: Int32) {
        _ = registry.withLock { $0.pids.remove(pid) }
    }
}
