import Dispatch
import Foundation
import Testing

@testable import Orchestrator

@Suite("Group commit")
struct GroupCommitTests {
    /// The barriers committed so far, read on `queue` through the store's connection.
    static func barriers(_ db: Database, on queue: DispatchQueue) -> String? {
        queue.sync { try? scalar(db, "SELECT commits FROM durability_barrier") }
    }

    @Test("--sync always: an acknowledgement runs only after a barrier that covers it")
    func always() throws {
        let directory = try TemporaryDirectory()
        let database = try JobStore(database: Database(path: directory.file("orchd.sqlite3"))).database
        let queue = DispatchQueue(label: "test.control")
        let commit = queue.sync { GroupCommit(database: database, queue: queue, policy: .always) }
        let acknowledged = DispatchSemaphore(value: 0)
        let seen = LockedBox<String?>(nil)
        queue.async {
            commit.afterDurable {
                seen.value = try? scalar(database, "SELECT commits FROM durability_barrier")
                acknowledged.signal()
            }
        }
        #expect(acknowledged.wait(timeout: .now() + 30) == .success)
        #expect(seen.value == "1")
    }

    @Test("--sync interval: an acknowledgement runs once committed, before any barrier; the timer's barrier follows")
    func interval() throws {
        let directory = try TemporaryDirectory()
        let database = try JobStore(database: Database(path: directory.file("orchd.sqlite3"))).database
        let queue = DispatchQueue(label: "test.control")
        let commit = queue.sync { GroupCommit(database: database, queue: queue, policy: .interval(.milliseconds(1))) }
        let acknowledged = DispatchSemaphore(value: 0)
        let barrier = DispatchSemaphore(value: 0)
        let seen = LockedBox<String?>(nil)
        queue.async {
            commit.afterBarrier = {
                if (try? scalar(database, "SELECT commits FROM durability_barrier")) == "1" { barrier.signal() }
            }
            commit.afterDurable {
                seen.value = try? scalar(database, "SELECT commits FROM durability_barrier")
                acknowledged.signal()
            }
        }
        #expect(acknowledged.wait(timeout: .now() + 30) == .success)
        // The acknowledgement was queued before the timer fired: no barrier had run yet.
        #expect(seen.value == "0")
        #expect(barrier.wait(timeout: .now() + 30) == .success, "the timer started a barrier")
        #expect(Self.barriers(database, on: queue) == "1")
    }

    @Test("--sync interval: flush at shutdown runs the acknowledgements still waiting after one barrier")
    func flushInterval() throws {
        let directory = try TemporaryDirectory()
        let database = try JobStore(database: Database(path: directory.file("orchd.sqlite3"))).database
        let queue = DispatchQueue(label: "test.control")
        let commit = queue.sync { GroupCommit(database: database, queue: queue, policy: .interval(.seconds(3600))) }
        let ran = LockedBox(0)
        queue.sync {
            commit.afterDurable { ran.value += 1 }
            commit.flush()
        }
        #expect(ran.value == 1)
        #expect(Self.barriers(database, on: queue) == "1")
    }
}
