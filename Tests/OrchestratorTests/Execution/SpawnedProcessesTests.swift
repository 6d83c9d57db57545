import Glibc
import Testing
@testable import Orchestrator

@Suite("Spawned processes and the orphan scan")
struct SpawnedProcessesTests {
    @Test("an orphan scan while spawns are under way waits, and is due when the last one settles")
    func scanWaitsForSpawns() {
        // A registry of its own: the daemon's would reap this test process's children.
        var registry = SpawnedProcesses.Registry()
        let idleScan = registry.orphanScanMayRun()
        #expect(idleScan)
        registry.spawnBegan()
        let scanDuringSpawn = registry.orphanScanMayRun()
        #expect(!scanDuringSpawn)
        registry.spawnBegan()
        let dueAfterFirst = registry.spawnSettled(child: 10)
        #expect(!dueAfterFirst, "one spawn is still under way")
        #expect(registry.orphanScanWaiting)
        let dueAfterLast = registry.spawnSettled(child: nil)
        #expect(dueAfterLast, "the last spawn settled: the scan is due")
        #expect(!registry.orphanScanWaiting && registry.spawning == 0)
        #expect(registry.pids == [10])
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
