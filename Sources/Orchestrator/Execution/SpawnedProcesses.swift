import Synchronization

/// The children this daemon spawned and reaps itself (by pidfd). The ``OrphanReaper`` leaves
/// these alone and reaps every other child: orphaned grandchildren handed to us as the child
/// subreaper.
///
/// A child exists before its pid is known, so ``register(_:)`` counts each spawn under way,
/// and an orphan scan that finds one waits until all have settled (``deferScan(_:)``): the
/// scan can never see one of our own children before it is registered. The lock is not held
/// across the spawn itself: with `CLONE_VFORK` that lasts until the child's `execve`, and
/// holding it made concurrent spawns wait for each other and the reaper of an ended job
/// spin for the lock.
enum SpawnedProcesses {
    struct Registry {
        /// Our children, spawned and not yet reaped.
        var pids: Set<Int32> = []
        /// Spawns under way: their child may exist without being in ``pids`` yet.
        var spawning = 0
        /// The orphan scans to run once no spawn is under way.
        var deferredScans: [@Sendable () -> Void] = []
    }

    static let registry = Mutex(Registry())

    /// Runs `spawn`, which creates at most one child and returns 0 with its pid (else an
    /// error number), and registers that child before any orphan scan can look for it.
    /// - Returns: what `spawn` returned.
    static func register(_ spawn: () -> (result: Int32, pid: Int32)) -> Int32 {
        registry.withLock { $0.spawning += 1 }
        let (result, pid) = spawn()
        let settledScans = registry.withLock { registry -> [@Sendable () -> Void] in
            if result == 0 { registry.pids.insert(pid) }
            registry.spawning -= 1
            guard registry.spawning == 0 else { return [] }
            defer { registry.deferredScans.removeAll() }
            return registry.deferredScans
        }
        for scan in settledScans { scan() }
        return result
    }

    /// Whether an orphan scan must wait: `scan` is kept and run (on the thread whose spawn
    /// settles last) when a spawn is under way.
    static func deferScan(_ registry: inout Registry, _ scan: @escaping @Sendable () -> Void) -> Bool {
        guard registry.spawning > 0 else { return false }
        registry.deferredScans.append(scan)
        return true
    }

    /// Forgets a child once it was reaped.
    static func reaped(_ pid: Int32) {
        _ = registry.withLock { $0.pids.remove(pid) }
    }
}
