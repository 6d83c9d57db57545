import Dispatch
import Glibc
import Synchronization
import Testing
@testable import Orchestrator

@Suite("Spawned processes and the orphan scan")
struct SpawnedProcessesTests {
    @Test("an orphan scan while a spawn is under way reaps nothing and runs once the spawn is registered")
    func scanWaitsForSpawn() {
        let scans = Mutex(0)
        let settled = DispatchSemaphore(value: 0)
        let result = SpawnedProcesses.register {
            // Our spawn is under way: its child could exist unregistered, so the scan waits.
            let reaped = OrphanReaper.reapOrphans(deferringTo: {
                scans.withLock { $0 += 1 }
                settled.signal()
            })
            #expect(reaped == nil)
            #expect(scans.withLock { $0 } == 0)
            return (ENOENT, 0)  // as a spawn that created no child
        }
        #expect(result == ENOENT)
        // Run by the last spawn to settle: ours, or one of a test running beside this one.
        #expect(settled.wait(timeout: .now() + 30) == .success)
        #expect(scans.withLock { $0 } == 1)
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
