import Glibc
import Testing
@testable import Orchestrator

@Suite("Spawned processes and the orphan scan")
struct SpawnedProcessesTests {
    // Registries of the tests' own: the daemon's would reap this test process's children.

    @Test("an orphan scan with no spawn under way reaps every child that is not ours at once")
    func scanWithoutSpawns() {
        var registry = SpawnedProcesses.Registry()
        registry.pids = [6]
        let orphans = registry.orphansToReap(among: [5, 6, 7])
        #expect(orphans == [5, 7])
        #expect(registry.waitingScan == nil)
    }

    @Test("a scan waits only for the spawns under way when it listed the children, not for later ones")
    func scanWaitsForEarlierSpawnsOnly() {
        var registry = SpawnedProcesses.Registry()
        let first = registry.spawnBegan()
        // 7 is the first spawn's child, not registered yet; 5 is an orphan.
        let now = registry.orphansToReap(among: [5, 7])
        #expect(now.isEmpty)
        let later = registry.spawnBegan()
        let askedAgain = registry.orphansToReap(among: [5, 7])
        #expect(askedAgain.isEmpty)
        #expect(registry.rescanAsked)
        // The later spawn settling first does not end the wait, and keeps the spawns overlapping.
        let afterLater = registry.spawnSettled(later, child: 8)
        #expect(afterLater == .init())
        let third = registry.spawnBegan()
        let afterFirst = registry.spawnSettled(first, child: 7)
        #expect(afterFirst == .init(reap: [5], rescan: true), "the first spawn's child is ours, not an orphan")
        #expect(registry.waitingScan == nil && !registry.rescanAsked)
        // The rescan, with the third spawn under way, waits for that one alone.
        let rescan = registry.orphansToReap(among: [5, 7, 8, 9])
        #expect(rescan.isEmpty)
        #expect(registry.waitingScan?.spawns == [third])
        let afterThird = registry.spawnSettled(third, child: 9)
        #expect(afterThird == .init(reap: [5]))
    }

    @Test("a waited-for spawn's child is never reaped by the scan, even once its watcher reaped it")
    func reapedChildStaysExcluded() {
        var registry = SpawnedProcesses.Registry()
        let a = registry.spawnBegan(), b = registry.spawnBegan()
        _ = registry.orphansToReap(among: [5, 7, 9])
        _ = registry.spawnSettled(a, child: 7)
        registry.pids.remove(7)  // its pidfd watcher reaped it; the pid could be reused
        let work = registry.spawnSettled(b, child: 9)
        #expect(work.reap == [5])
    }

    @Test("a spawned child is registered until it is reaped")
    func registeredUntilReaped() throws {
        var pid: pid_t = 0
        let result = SpawnedProcesses.register {
            pid = fork()
            if pid == 0 { _exit(0) }
            return (pid > 0 ? 0 : errno, pid)
        }
        try #require(result == 0)
        #expect(SpawnedProcesses.registry.withLock { $0.pids.contains(pid) })
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        SpawnedProcesses.reaped(pid)
        #expect(!SpawnedProcesses.registry.withLock { $0.pids.contains(pid) })
    }
}
