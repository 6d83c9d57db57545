import Dispatch
import Glibc
import Synchronization
import Testing
@testable import orchctl

@Suite("Blocking threads")
struct BlockingThreadTests {
    @Test("each body runs on a thread of its own: sixteen bodies that each wait for all the others all arrive")
    func rendezvous() {
        let count = 16
        let arrived = Atomic<Int>(0)
        let gaveUp = Atomic<Bool>(false)
        let allThere = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        // Bodies sharing threads never all get there: each gives up at this deadline, and the
        // test fails instead of hanging.
        let deadline = DispatchTime.now() + 600
        for _ in 0..<count {
            BlockingThread.start {
                if arrived.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue == count {
                    for _ in 0..<count { allThere.signal() }
                }
                // Blocks its thread until every body has started.
                if allThere.wait(timeout: deadline) == .timedOut { gaveUp.store(true, ordering: .sequentiallyConsistent) }
                finished.signal()
            }
        }
        for _ in 0..<count {
            guard finished.wait(timeout: deadline + 600) == .success else {
                Issue.record("not every body finished")
                break
            }
        }
        let started = arrived.load(ordering: .sequentiallyConsistent)
        #expect(started == count)
        let waitedTooLong = gaveUp.load(ordering: .sequentiallyConsistent)
        #expect(!waitedTooLong, "a body waited a minute for the others to start")
    }

    @Test("a thread inherits its starter's signal mask, so a blocked signal can be taken with sigwait there")
    func signalMask() {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR2)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let seen = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        BlockingThread.start {
            var mask = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &mask)
            seen.store(sigismember(&mask, SIGUSR2) == 1, ordering: .sequentiallyConsistent)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 600) == .success, "the thread ran its body")
        let inherited = seen.load(ordering: .sequentiallyConsistent)
        #expect(inherited)
    }
}
