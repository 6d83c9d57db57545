import Dispatch
import Foundation
import Glibc
@testable import Orchestrator
import Synchronization
import Testing

/// The process's epoll loop: handlers on their queue, one at a time, never after cancellation,
/// and watches created and cancelled at a high rate from many queues (which crashes
/// libdispatch's own read sources).
@Suite("EpollLoop")
struct EpollLoopTests {
    /// A connected pair of non-blocking Unix stream sockets, closed by the caller.
    static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    /// Waits (at most a minute, so a lost event fails the test instead of hanging it).
    static func wait(_ semaphore: DispatchSemaphore, _ what: Comment) {
        #expect(semaphore.wait(timeout: .now() + 60) == .success, what)
    }

    @Test("a watch calls its handler on its queue with the events that were ready")
    func readable() throws {
        let (a, b) = try Self.socketPair()
        defer { close(b) }
        let queue = DispatchQueue(label: "test.epoll.readable")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let called = DispatchSemaphore(value: 0)
        let seen = LockedBox<(EpollLoop.Events, Bool)?>(nil)
        _ = EpollLoop.shared.watch(a, for: .readable, on: queue) { watch, events in
            seen.value = (events, DispatchQueue.getSpecific(key: key) == true)
            watch.cancel { close(a) }
            called.signal()
        }
        #expect(send(b, "x", 1, 0) == 1)
        Self.wait(called, "the handler ran")
        let (events, onQueue) = try #require(seen.value)
        #expect(events.contains(.readable))
        #expect(onQueue, "the handler ran on the watch's queue")
    }

    @Test("a watch without a queue runs its handler on the loop's own thread, and a cancel made there runs its closure after the handler returned")
    func onLoopThread() throws {
        let (a, b) = try Self.socketPair()
        defer { close(b) }
        let handlerReturned = Atomic<Bool>(false)
        let seen = LockedBox<(onLoopThread: Bool, closedAfterReturn: Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        _ = EpollLoop.shared.watch(a, for: .readable, on: nil) { watch, _ in
            let onLoopThread = EpollLoop.shared.isLoopThread
            watch.cancel {
                close(a)
                seen.value = (onLoopThread, handlerReturned.load(ordering: .acquiring))
                done.signal()
            }
            handlerReturned.store(true, ordering: .releasing)
        }
        #expect(send(b, "x", 1, 0) == 1)
        Self.wait(done, "the cancellation's closure ran")
        let (onLoopThread, closedAfterReturn) = try #require(seen.value)
        #expect(onLoopThread)
        #expect(!EpollLoop.shared.isLoopThread)
        #expect(closedAfterReturn, "the descriptor was closed only once the handler had returned")
    }

    @Test("a cancelled watch's handler is not called again, and a second cancel does nothing")
    func cancelled() throws {
        let (a, b) = try Self.socketPair()
        defer { close(b) }
        let queue = DispatchQueue(label: "test.epoll.cancelled")
        let calls = Atomic<Int>(0)
        let watch = EpollLoop.shared.watch(a, for: .readable, on: queue) { _, _ in calls.add(1, ordering: .relaxed) }
        let cancelled = DispatchSemaphore(value: 0)
        watch.cancel { cancelled.signal() }
        watch.cancel { Issue.record("a second cancel ran its closure") }
        Self.wait(cancelled, "the cancellation's closure ran")
        #expect(send(b, "x", 1, 0) == 1)
        // A second watch on the same descriptor sees the byte: by then the first would have too.
        let secondCalled = DispatchSemaphore(value: 0)
        _ = EpollLoop.shared.watch(a, for: .readable, on: queue) { watch, _ in
            watch.cancel { close(a) }
            secondCalled.signal()
        }
        Self.wait(secondCalled, "a new watch of the descriptor fired")
        queue.sync {}
        let callsAfterCancel = calls.load(ordering: .relaxed)
        #expect(callsAfterCancel == 0)
    }

    @Test("a descriptor that stays ready calls its handler one call at a time, even on a concurrent queue")
    func oneAtATime() throws {
        let (a, b) = try Self.socketPair()
        defer { close(b) }
        #expect(send(b, "x", 1, 0) == 1)  // never read: the socket stays readable
        let queue = DispatchQueue(label: "test.epoll.concurrent", attributes: .concurrent)
        let inside = Atomic<Bool>(false)
        let overlapped = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        _ = EpollLoop.shared.watch(a, for: .readable, on: queue) { watch, _ in
            if inside.exchange(true, ordering: .acquiring) { overlapped.store(true, ordering: .relaxed) }
            usleep(200)  // widen the window an overlap would need
            inside.store(false, ordering: .releasing)
            if calls.add(1, ordering: .relaxed).newValue == 200 { watch.cancel { close(a); done.signal() } }
        }
        Self.wait(done, "200 calls")
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
    }

    @Test("a cancel made from another thread while the handler runs on a concurrent queue runs its closure only after the handler returned")
    func cancelWaitsForHandler() throws {
        let (a, b) = try Self.socketPair()
        defer { close(b) }
        #expect(send(b, "x", 1, 0) == 1)
        let queue = DispatchQueue(label: "test.epoll.cancel-during-call", attributes: .concurrent)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let handlerReturned = Atomic<Bool>(false)
        let watch = EpollLoop.shared.watch(a, for: .readable, on: queue) { _, _ in
            entered.signal()
            // Still using the descriptor; for a minute at most, should the test never let go.
            #expect(release.wait(timeout: .now() + 600) == .success, "the test let the handler return")
            handlerReturned.store(true, ordering: .releasing)
        }
        Self.wait(entered, "the handler started")
        let closed = DispatchSemaphore(value: 0)
        let closedWhileHandling = Atomic<Bool>(false)
        watch.cancel {
            if !handlerReturned.load(ordering: .acquiring) { closedWhileHandling.store(true, ordering: .relaxed) }
            close(a)
            closed.signal()
        }
        // The closure must not have run yet; let the handler return, then it may.
        #expect(closed.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "the closure ran while the handler still ran")
        release.signal()
        Self.wait(closed, "the cancellation's closure ran after the handler")
        let early = closedWhileHandling.load(ordering: .relaxed)
        #expect(!early)
    }

    @Test("a watch asked for room to write fires once the peer has read")
    func writable() throws {
        let (a, b) = try Self.socketPair()
        defer { close(b) }
        let chunk = [UInt8](repeating: 7, count: 65536)
        while send(a, chunk, chunk.count, Int32(MSG_DONTWAIT)) > 0 {}
        #expect(errno == EAGAIN)
        let queue = DispatchQueue(label: "test.epoll.writable")
        let writable = DispatchSemaphore(value: 0)
        let watch = EpollLoop.shared.watch(a, for: .readable, on: queue) { watch, events in
            guard events.contains(.writable) else { return }
            watch.cancel { close(a) }
            writable.signal()
        }
        watch.setInterest([.readable, .writable])
        var sink = [UInt8](repeating: 0, count: 65536)
        while recv(b, &sink, sink.count, Int32(MSG_DONTWAIT)) > 0 {}
        Self.wait(writable, "the watch reported room to write")
    }

    @Test("a descriptor epoll refuses (a regular file) is polled instead")
    func polledWhenRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("epoll-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        defer { unlink(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        let called = DispatchSemaphore(value: 0)
        _ = EpollLoop.shared.watch(fd, for: .readable, on: DispatchQueue(label: "test.epoll.polled")) { watch, events in
            #expect(events.contains(.readable))
            watch.cancel { close(fd) }
            called.signal()
        }
        Self.wait(called, "the polled handler ran")
    }

    @Test("watches created and cancelled at a high rate from many queues deliver every message")
    func churn() throws {
        let workers = 8
        let iterations = 2_000
        let delivered = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let queue = DispatchQueue(label: "test.epoll.churn.\(worker)")
            for _ in 0..<iterations {
                var fds: [Int32] = [-1, -1]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                    failures.add(1, ordering: .relaxed)
                    continue
                }
                let (a, b) = (fds[0], fds[1])
                let closed = DispatchSemaphore(value: 0)
                _ = EpollLoop.shared.watch(a, for: .readable, on: queue) { watch, _ in
                    var byte: UInt8 = 0
                    let count = recv(a, &byte, 1, Int32(MSG_DONTWAIT))
                    guard count >= 0 else { return }  // EAGAIN: nothing yet
                    if count == 1 { delivered.add(1, ordering: .relaxed) }
                    watch.cancel { close(a); closed.signal() }
                }
                _ = send(b, "x", 1, Int32(MSG_NOSIGNAL))
                close(b)
                if closed.wait(timeout: .now() + 60) != .success { failures.add(1, ordering: .relaxed) }
            }
        }
        let (failed, received) = (failures.load(ordering: .relaxed), delivered.load(ordering: .relaxed))
        #expect(failed == 0)
        #expect(received == workers * iterations)
    }
}
