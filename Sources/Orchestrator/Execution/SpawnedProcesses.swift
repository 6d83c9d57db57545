import Synchronization

/// The children this daemon spawned and reaps itself (by pidfd). The ``OrphanReaper`` leaves
/// these alone and reaps every other child: orphaned grandchildren handed to us as the child
/// subreaper.
///
/// A child exists before its pid is known, so ``register(_:)`` marks each spawn under way.
/// An orphan scan lists the children that are not ours; while spawns are under way, some of
/// those may be theirs, so the scan waits for exactly those spawns (not for later ones) and the
/// last of them to settle reaps the rest, under the lock: the scan never takes a child of
/// ours, and overlapping spawns never put it off for longer than the ones it found. The lock
/// is not held across the spawn itself: with `CLONE_VFORK` that lasts until the child's
/// `execve`, and holding it made concurrent spawns wait for each other and the reaper of an
/// ended job spin for the lock.
enum SpawnedProcesses {
    struct Registry {
        /// Our children, spawned and not yet reaped.
        var pids: Set<Int32> = []
        /// Spawns under way, by the number each got when it began.
        var spawnsUnderWay: Set<UInt64> = []
        private var lastSpawn: UInt64 = 0
        /// A scan waiting for the spawns that were under way when it listed the children.
        var waitingScan: WaitingScan?
        /// Another scan was asked for while one waited: run once that one is done.
        var rescanAsked = false

        struct WaitingScan {
            /// The children that were not ours when listed: orphans, or a child of a spawn
            /// in ``spawns``.
            var candidates: [Int32]
            /// Those spawns, while not yet settled.
            var spawns: Set<UInt64>
            /// The children they registered, left alone even once reaped.
            var theirChildren: Set<Int32> = []
        }

        /// What a settling spawn must do about orphans.
        struct OrphanWork: Equatable {
            /// Reap these now (a waiting scan's spawns have all settled).
            var reap: [Int32] = []
            /// Then scan again (one was asked for meanwhile).
            var rescan = false
        }

        /// Marks a spawn under way, before its child can exist.
        /// - Returns: the spawn's number, for ``spawnSettled(_:child:)``.
        mutating func spawnBegan() -> UInt64 {
            lastSpawn += 1
            spawnsUnderWay.insert(lastSpawn)
            return lastSpawn
        }

        /// Registers the spawn's child (`nil`: it made none) and marks the spawn settled.
        mutating func spawnSettled(_ spawn: UInt64, child pid: Int32?) -> OrphanWork {
            if let pid { pids.insert(pid) }
            spawnsUnderWay.remove(spawn)
            guard var scan = waitingScan, scan.spawns.remove(spawn) != nil else { return OrphanWork() }
            if let pid { scan.theirChildren.insert(pid) }
            guard scan.spawns.isEmpty else {
                waitingScan = scan
                return OrphanWork()
            }
            waitingScan = nil
            defer { rescanAsked = false }
            return OrphanWork(
                reap: scan.candidates.filter { !pids.contains($0) && !scan.theirChildren.contains($0) },
                rescan: rescanAsked)
        }

        /// Starts an orphan scan over `children` (listed under the lock).
        /// - Returns: the orphans to reap now; none when the scan waits for spawns under way
        ///   (their last to settle gets the rest) or when another scan waits already (this
        ///   one then runs after it).
        mutating func orphansToReap(among children: [Int32]) -> [Int32] {
            if waitingScan != nil {
                rescanAsked = true
                return []
            }
            let candidates = children.filter { !pids.contains($0) }
            guard !spawnsUnderWay.isEmpty else { return candidates }
            waitingScan = WaitingScan(candidates: candidates, spawns: spawnsUnderWay)
            return []
        }
    }

    static let registry = Mutex(Registry())

    /// Runs `spawn`, which creates at most one child and returns 0 with its pid (else an
    /// error number), and registers that child before any orphan scan can take it.
    /// - Returns: what `spawn` returned.
    static func register(_ spawn: () -> (result: Int32, pid: Int32)) -> Int32 {
        let number = registry.withLock { $0.spawnBegan() }
        let (result, pid) = spawn()
        registry.withLock { registry in
            let work = registry.spawnSettled(number, child: result == 0 ? pid : nil)
            OrphanReaper.reap(work.reap)
            if work.rescan { OrphanReaper.reap(registry.orphansToReap(among: OrphanReaper.children())) }
        }
        return result
    }

    /// Whether `pid` is a child this daemon spawned and has not reaped yet.
    static func isSpawned(_ pid: Int32) -> Bool {
        registry.withLock { $0.pids.contains(pid) }
    }

    /// Forgets a child once it was reaped.
    static func reaped(_ pid: Int32) {
        _ = registry.withLock { $0.pids.remove(pid) }
    }
}
