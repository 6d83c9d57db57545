import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Orchestrator

@Suite("Group commit")
struct GroupCommitTests {
    /// Owns a store's connection and its group commit on one queue, as the scheduler does.
    actor Owner {
        private let executor = DispatchQueueExecutor(label: "test.control")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        let database: Database
        let commit: GroupCommit

        init(
            path: String, policy: SyncPolicy, syncQueue: DispatchQueue = DispatchQueue(label: "test.group-commit"),
            sync: (@Sendable (Bool) -> GroupCommit.SyncOutcome)? = nil
        ) throws {
            let database = try JobStore(database: Database(path: path)).database
            self.database = database
            commit = GroupCommit(database: database, queue: executor.queue, policy: policy, syncQueue: syncQueue, sync: sync)
        }

        func setSyncFailed(_ work: @escaping @Sendable (String) -> Void) {
            commit.syncFailed = work
        }

        func setDescriptorRelief(_ relief: DescriptorRelief) {
            commit.descriptorRelief = relief
        }

        /// Connects the group commit's later turns to this owner; first thing after init.
        func attach() {
            commit.reenter = { [weak self] work in self?.assumeIsolated { work($0.commit) } }
        }

        /// The barriers finished so far.
        func barriers() -> Int {
            commit.barriersFinished
        }

        func afterDurable(_ work: @escaping @Sendable () -> Void) {
            commit.afterDurable(work)
        }

        /// Runs `work` through ``GroupCommit/whenDurable(_:)``; returns whether it ran at once.
        func whenDurable(_ work: @escaping @Sendable () -> Void) -> Bool {
            let ranAtOnce = LockedBox(false)
            let inCall = LockedBox(true)
            commit.whenDurable {
                if inCall.value { ranAtOnce.value = true }
                work()
            }
            inCall.value = false
            return ranAtOnce.value
        }

        /// A committed change noted, then an answer that changes nothing, in one turn.
        func changedThenWhenDurable(_ work: @escaping @Sendable () -> Void) -> Bool {
            commit.changed()
            return whenDurable(work)
        }

        /// A change's acknowledgement (its barrier scheduled, not started), a flush, then an
        /// answer that changes nothing, in one turn: as at a stop.
        func afterDurableFlushThenWhenDurable(_ work: @escaping @Sendable () -> Void) -> Bool {
            commit.afterDurable {}
            commit.flush()
            return whenDurable(work)
        }

        /// An acknowledgement of a change, then an answer that changes nothing, in one turn.
        func afterDurableThenWhenDurable(_ first: @escaping @Sendable () -> Void, _ second: @escaping @Sendable () -> Void) -> Bool {
            commit.afterDurable(first)
            return whenDurable(second)
        }

        func setAfterBarrier(_ work: @escaping @Sendable () -> Void) {
            commit.afterBarrier = { _ in work() }
        }

        func setBarrierHooks(starting: @escaping @Sendable () -> Int64?, after: @escaping @Sendable (Int64?) -> Void) {
            commit.barrierStarting = starting
            commit.afterBarrier = after
        }

        func flush() {
            commit.flush()
        }
    }

    /// A queue for the barriers that runs nothing until `release` is signalled: a barrier
    /// started meanwhile stays in flight. Held for a minute at most, so that a test that never
    /// releases it fails instead of waiting for ever on what the queue holds.
    static func heldSyncQueue() -> (queue: DispatchQueue, release: DispatchSemaphore) {
        let queue = DispatchQueue(label: "test.held-group-commit")
        let release = DispatchSemaphore(value: 0)
        queue.async { #expect(release.wait(timeout: .now() + 600) == .success, "the test released the barriers' queue") }
        return (queue, release)
    }

    @Test("--sync always: an acknowledgement runs only after a barrier that covers it")
    func always() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always)
        await owner.attach()
        let acknowledged = DispatchSemaphore(value: 0)
        let seen = LockedBox<Int?>(nil)
        await owner.afterDurable {
            seen.value = owner.assumeIsolated { $0.barriers() }
            acknowledged.signal()
        }
        #expect(acknowledged.wait(timeout: .now() + 30) == .success)
        #expect(seen.value == 1)
    }

    @Test("--sync always: an answer that changes nothing runs at once when every change is durable, and starts no barrier")
    func whenDurableAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always)
        await owner.attach()
        let acknowledged = DispatchSemaphore(value: 0)
        await owner.afterDurable { acknowledged.signal() }
        #expect(acknowledged.wait(timeout: .now() + 30) == .success)
        #expect(await owner.barriers() == 1)
        #expect(await owner.whenDurable {}, "the one change is durable")
        // A later acknowledgement's barrier is the second: the answer started none.
        await owner.afterDurable { acknowledged.signal() }
        #expect(acknowledged.wait(timeout: .now() + 30) == .success)
        #expect(await owner.barriers() == 2)
    }

    @Test("--sync always: before its first barrier, an answer waits for one: the WAL may hold another orchd's commits, not yet synced")
    func whenDurableAtStart() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always)
        await owner.attach()
        let answered = DispatchSemaphore(value: 0)
        let seen = LockedBox<Int?>(nil)
        let atOnce = await owner.whenDurable {
            seen.value = owner.assumeIsolated { $0.barriers() }
            answered.signal()
        }
        #expect(!atOnce)
        #expect(answered.wait(timeout: .now() + 30) == .success)
        #expect(seen.value == 1)
    }

    @Test("--sync always: an answer after a change not yet durable waits for the barrier that covers it")
    func whenDurableAfterChange() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always)
        await owner.attach()
        let answered = DispatchSemaphore(value: 0)
        let seen = LockedBox<Int?>(nil)
        let atOnce = await owner.changedThenWhenDurable {
            seen.value = owner.assumeIsolated { $0.barriers() }
            answered.signal()
        }
        #expect(!atOnce)
        #expect(answered.wait(timeout: .now() + 30) == .success)
        #expect(seen.value == 1)
    }

    @Test("--sync always: an answer while a barrier covering every change is in flight goes with that barrier")
    func whenDurableWithBarrierInFlight() async throws {
        let directory = try TemporaryDirectory()
        let (syncQueue, release) = Self.heldSyncQueue()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always, syncQueue: syncQueue)
        await owner.attach()
        let started = DispatchSemaphore(value: 0)
        await owner.setBarrierHooks(starting: {
            started.signal()
            return nil
        }, after: { _ in })
        await owner.afterDurable {}
        #expect(started.wait(timeout: .now() + 30) == .success, "the barrier started")
        let answered = DispatchSemaphore(value: 0)
        let seen = LockedBox<Int?>(nil)
        let atOnce = await owner.whenDurable {
            seen.value = owner.assumeIsolated { $0.barriers() }
            answered.signal()
        }
        #expect(!atOnce, "the change may not be on disk yet")
        release.signal()
        #expect(answered.wait(timeout: .now() + 30) == .success)
        #expect(seen.value == 1, "answered by the barrier in flight")
        #expect(await owner.barriers() == 1, "and no other barrier started")
    }

    @Test("--sync always: an answer after a flush runs at once, though the barrier scheduled before the flush starts later")
    func whenDurableAfterFlush() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always)
        await owner.attach()
        let answered = DispatchSemaphore(value: 0)
        let atOnce = await owner.afterDurableFlushThenWhenDurable { answered.signal() }
        #expect(atOnce, "the flush made every commit durable")
        #expect(answered.wait(timeout: .now() + 30) == .success)
        // The barrier scheduled before the flush still runs, and answers nothing twice.
        let later = DispatchSemaphore(value: 0)
        await owner.afterDurable { later.signal() }
        #expect(later.wait(timeout: .now() + 30) == .success)
    }

    @Test("--sync interval: an answer that changes nothing runs at once, or after the acknowledgements already waiting")
    func whenDurableInterval() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .interval(.seconds(3600)))
        await owner.attach()
        #expect(await owner.whenDurable {}, "under interval, committed is enough")
        let order = LockedBox<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let atOnce = await owner.afterDurableThenWhenDurable({ order.value.append("acknowledgement") }, {
            order.value.append("answer")
            done.signal()
        })
        #expect(!atOnce)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(order.value == ["acknowledgement", "answer"])
        #expect(await owner.barriers() == 0)
    }

    @Test("--sync interval: an acknowledgement runs once committed, before any barrier; the timer's barrier follows")
    func interval() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .interval(.milliseconds(1)))
        await owner.attach()
        let acknowledged = DispatchSemaphore(value: 0)
        let barrier = DispatchSemaphore(value: 0)
        let seen = LockedBox<Int?>(nil)
        await owner.setAfterBarrier {
            if owner.assumeIsolated({ $0.barriers() }) == 1 { barrier.signal() }
        }
        await owner.afterDurable {
            seen.value = owner.assumeIsolated { $0.barriers() }
            acknowledged.signal()
        }
        #expect(acknowledged.wait(timeout: .now() + 30) == .success)
        // The acknowledgement was queued before the timer fired: no barrier had run yet.
        #expect(seen.value == 0)
        #expect(barrier.wait(timeout: .now() + 30) == .success, "the timer started a barrier")
        #expect(await owner.barriers() == 1)
    }

    @Test("--sync always: a barrier hands over what was committed as it started, not what was committed while it ran")
    func durableMark() async throws {
        let directory = try TemporaryDirectory()
        let (syncQueue, release) = Self.heldSyncQueue()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always, syncQueue: syncQueue)
        await owner.attach()
        // Stands for the last event's sequence number: 1 as the barrier starts, 2 after.
        let lastCommitted = LockedBox<Int64>(1)
        let handed = LockedBox<[Int64?]>([])
        let finished = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        await owner.setBarrierHooks(starting: {
            defer { started.signal() }
            return lastCommitted.value
        }, after: { mark in
            handed.value.append(mark)
            finished.signal()
        })
        await owner.afterDurable {}
        // A commit once the barrier has started (its sync is held): not covered by it.
        #expect(started.wait(timeout: .now() + 30) == .success, "the barrier started")
        #expect(await owner.barriers() == 0, "the barrier is in flight, held")
        lastCommitted.value = 2
        release.signal()
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(handed.value == [1])
    }

    @Test("--sync always: flush at shutdown waits for the barrier in flight, then runs its acknowledgements once")
    func flushWithBarrierInFlight() async throws {
        let directory = try TemporaryDirectory()
        // The barrier's queue is held, so the barrier the acknowledgement starts stays in flight.
        let (syncQueue, release) = Self.heldSyncQueue()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always, syncQueue: syncQueue)
        await owner.attach()
        let ran = LockedBox(0)
        await owner.afterDurable { ran.value += 1 }
        // A later turn of the owner: the barrier has started (its sync is queued) by then.
        #expect(await owner.barriers() == 0)
        #expect(ran.value == 0)

        let finished = DispatchSemaphore(value: 0)
        await owner.setAfterBarrier { if owner.assumeIsolated({ $0.barriers() }) == 2 { finished.signal() } }
        // The flush waits for the held barrier's sync (whose failure would decide), so it is
        // released from here while the flush runs.
        async let flushed: Void = owner.flush()
        release.signal()
        await flushed
        #expect(ran.value == 1, "flush ran the acknowledgement the held barrier was to run")
        #expect(finished.wait(timeout: .now() + 30) == .success, "the held barrier finished")
        #expect(ran.value == 1, "and did not run it a second time")
    }

    @Test("a flush during a barrier whose fdatasync fails acknowledges nothing, though its own sync would succeed")
    func flushAfterFailedBarrier() async throws {
        let directory = try TemporaryDirectory()
        let (syncQueue, release) = Self.heldSyncQueue()
        let sync = ScriptedSync([.failed("cannot sync the job database to disk: Input/output error"), .durable])
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always, syncQueue: syncQueue, sync: { sync($0) })
        await owner.attach()
        let failures = LockedBox(0)
        await owner.setSyncFailed { _ in failures.value += 1 }
        let ran = LockedBox(0)
        await owner.afterDurable { ran.value += 1 }
        #expect(await owner.barriers() == 0)
        async let flushed: Void = owner.flush()
        release.signal()
        await flushed
        #expect(ran.value == 0)
        #expect(failures.value == 1)
        #expect(sync.calls == 1, "the flush did not sync again after the failure")
    }

    @Test("--sync interval: flush at shutdown runs the acknowledgements still waiting after one barrier")
    func flushInterval() async throws {
        let directory = try TemporaryDirectory()
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .interval(.seconds(3600)))
        await owner.attach()
        let ran = LockedBox(0)
        await owner.afterDurable { ran.value += 1 }
        await owner.flush()
        #expect(ran.value == 1)
        #expect(await owner.barriers() == 1)
    }

    /// A sync that answers from `outcomes` in turn (the last one for ever), counting calls.
    final class ScriptedSync: Sendable {
        private let state: Mutex<(outcomes: [GroupCommit.SyncOutcome], calls: Int)>
        /// Runs at each call, with its number (from 1), on the sync queue before it returns.
        private let onCall: @Sendable (Int) -> Void
        init(_ outcomes: [GroupCommit.SyncOutcome], onCall: @escaping @Sendable (Int) -> Void = { _ in }) {
            state = Mutex((outcomes, 0))
            self.onCall = onCall
        }
        var calls: Int { state.withLock { $0.calls } }
        func callAsFunction(_ withDirectory: Bool) -> GroupCommit.SyncOutcome {
            let (call, outcome) = state.withLock { state in
                state.calls += 1
                return (state.calls, state.outcomes.count > 1 ? state.outcomes.removeFirst() : state.outcomes[0])
            }
            onCall(call)
            return outcome
        }
    }

    @Test("a failed fdatasync drops the acknowledgements it covered, tells the owner once, and no barrier follows")
    func failedSync() async throws {
        let directory = try TemporaryDirectory()
        let sync = ScriptedSync([.failed("cannot sync the job database to disk: Input/output error")])
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always, sync: { sync($0) })
        await owner.attach()
        let failures = LockedBox<[String]>([])
        let told = DispatchSemaphore(value: 0)
        await owner.setSyncFailed { message in
            failures.value.append(message)
            told.signal()
        }
        let ran = LockedBox(0)
        await owner.afterDurable { ran.value += 1 }
        #expect(told.wait(timeout: .now() + 30) == .success)
        // Later changes and a flush at a stop acknowledge nothing and sync no more.
        await owner.afterDurable { ran.value += 1 }
        await owner.flush()
        #expect(ran.value == 0)
        #expect(failures.value == ["cannot sync the job database to disk: Input/output error"])
        #expect(sync.calls == 1)
        #expect(await owner.barriers() == 0)
    }

    @Test("a WAL file that cannot be opened is tried again, one try at a time, asking for descriptors each time; every acknowledgement waits for the barrier that succeeds")
    func walNotOpened() async throws {
        let directory = try TemporaryDirectory()
        // The second try is held until the test has made its other changes, so that they come
        // while a try is in flight, however slow the machine: no timing is assumed.
        let secondTry = DispatchSemaphore(value: 0)
        let changesMade = DispatchSemaphore(value: 0)
        let sync = ScriptedSync([.notOpened("cannot open: Too many open files"), .notOpened("again"), .durable]) { call in
            guard call == 2 else { return }
            secondTry.signal()
            #expect(changesMade.wait(timeout: .now() + 600) == .success, "the test made its changes")
        }
        let owner = try Owner(path: directory.file("orchd.sqlite3"), policy: .always, sync: { sync($0) })
        await owner.attach()
        let relief = DescriptorRelief()
        let asked = Atomic<Int>(0)
        relief.setHandler { asked.add(1, ordering: .relaxed) }
        await owner.setDescriptorRelief(relief)
        let acknowledged = DispatchSemaphore(value: 0)
        let seen = LockedBox<[(barriers: Int, syncs: Int)]>([])
        let acknowledge: @Sendable () -> Void = {
            seen.value.append((owner.assumeIsolated { $0.barriers() }, sync.calls))
            acknowledged.signal()
        }
        await owner.afterDurable(acknowledge)
        #expect(secondTry.wait(timeout: .now() + 30) == .success, "a WAL not opened is tried again")
        // Each change while a try is pending waits with it instead of starting its own.
        for _ in 0..<4 { await owner.afterDurable(acknowledge) }
        changesMade.signal()
        for _ in 0..<5 { #expect(acknowledged.wait(timeout: .now() + 30) == .success) }
        #expect(seen.value.count == 5)
        #expect(seen.value.allSatisfy { $0.barriers == 1 }, "\(seen.value)")
        #expect(sync.calls == 3, "three tries in all")
        #expect(asked.load(ordering: .relaxed) == 2, "asked for descriptors after each try that could not open the WAL")
    }

    @Test("a WAL or database file removed or replaced fails the sync: the frames SQLite writes would be out of reach")
    func filesGoneOrReplaced() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.sqlite3")
        let database = try JobStore(database: Database(path: path)).database
        let files = GroupCommit.SyncedFiles(databasePath: path)
        #expect(files.sync(withDirectory: true) == .durable)

        // Replaced: another file under the WAL's name.
        try FileManager.default.moveItem(atPath: path + "-wal", toPath: path + "-wal.kept")
        _ = FileManager.default.createFile(atPath: path + "-wal", contents: Data())
        #expect(files.sync(withDirectory: false) == .failed("cannot sync the job database to disk: \(path)-wal was replaced by another file"))
        // Gone.
        try FileManager.default.removeItem(atPath: path + "-wal")
        #expect(files.sync(withDirectory: false)
            == .failed("cannot sync the job database to disk: cannot open \(path)-wal: No such file or directory"))
        try FileManager.default.moveItem(atPath: path + "-wal.kept", toPath: path + "-wal")
        #expect(files.sync(withDirectory: false) == .durable)

        // The database file gone, its WAL still there.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".kept")
        #expect(files.sync(withDirectory: false) == .failed("cannot sync the job database to disk: \(path): No such file or directory"))
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        #expect(files.sync(withDirectory: false) == .failed("cannot sync the job database to disk: \(path) was replaced by another file"))
        withExtendedLifetime(database) {}
    }
}
