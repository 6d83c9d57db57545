import CSQLite
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Orchestrator

@Suite("Database")
struct DatabaseTests {
    @Test("a new database is in WAL mode with synchronous=FULL, foreign keys and a 5 s busy timeout")
    func configuration() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        #expect(try scalar(db, "PRAGMA journal_mode") == "wal")
        #expect(try scalar(db, "PRAGMA synchronous") == "2") // FULL
        #expect(try scalar(db, "PRAGMA foreign_keys") == "1")
        #expect(try scalar(db, "PRAGMA busy_timeout") == "5000")
    }

    @Test("SQLite took orchd's library settings: no allocation is counted")
    func librarySettings() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        #expect(Database.libraryConfigured)
        try db.execute("CREATE TABLE t (x); INSERT INTO t VALUES (randomblob(100000))")
        // With allocation statistics on, the connection's own memory would be counted here.
        var current: Int64 = -1
        var highest: Int64 = -1
        #expect(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0) == SQLITE_OK)
        #expect(current == 0)
    }

    @Test("opening a file that is not a database throws SQLITE_NOTADB with a clear message")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("garbage.sqlite3")
        try Data(String(repeating: "this is not an SQLite database\n", count: 200).utf8).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: DatabaseError.self) { try Database(path: path) }
        #expect(error?.primaryCode == SQLITE_NOTADB)
        #expect(error?.isCorrupt == true)
        #expect(error?.description.contains("file is not a database") == true)
    }

    @Test("opening a path in a missing directory throws SQLITE_CANTOPEN naming the path")
    func cannotOpen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("missing/orchd.sqlite3")
        let error = #expect(throws: DatabaseError.self) { try Database(path: path) }
        #expect(error?.primaryCode == SQLITE_CANTOPEN)
        #expect(error?.description.contains(path) == true)
    }

    @Test("an error describes code, SQLite's text, message and SQL")
    func errorDescription() {
        let error = DatabaseError(code: SQLITE_FULL, message: "disk I/O", sql: "INSERT INTO jobs DEFAULT VALUES")
        #expect(error.description == "SQLite error 13 (database or disk is full): disk I/O while executing `INSERT INTO jobs DEFAULT VALUES`")
        #expect(error.isFull && !error.isBusy && !error.isCorrupt)
    }

    @Test("text, numbers, blobs and NULL round-trip exactly through a statement")
    func bindingRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        let statement = try db.cachedStatement("SELECT ?, ?, ?, ?, ?, ?, ?")
        let texts = ["", "a\u{0}b", "naïve ☃ 🚀"]
        try statement.bind([.text(texts[0]), .text(texts[1]), .text(texts[2]), 42, 2.5, .blob([0, 255, 1]), nil])
        #expect(try statement.step())
        #expect(statement.string(at: 0) == "")
        #expect(!statement.isNull(at: 0))
        #expect(statement.string(at: 1) == texts[1])
        #expect(statement.string(at: 2) == texts[2])
        #expect(statement.int64(at: 3) == 42 && statement.int(at: 3) == 42)
        #expect(statement.double(at: 4) == 2.5)
        #expect(statement.blob(at: 5) == [0, 255, 1])
        #expect(statement.isNull(at: 6) && statement.string(at: 6) == nil)
        #expect(try !statement.step())
    }

    @Test("reset clears the bindings, and the cache returns the same statement")
    func resetClearsBindings() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        let statement = try db.cachedStatement("SELECT ?")
        try statement.bind(7, at: 1)
        statement.reset()
        #expect(try statement.step())
        #expect(statement.isNull(at: 0))
        #expect(try db.cachedStatement("SELECT ?") === statement)
    }

    @Test("preparing two statements at once is refused rather than half-run")
    func twoStatements() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        let error = #expect(throws: DatabaseError.self) { try db.cachedStatement("SELECT 1; SELECT 2") }
        #expect(error?.code == SQLITE_MISUSE)
    }

    @Test("a write that throws rolls back everything it did")
    func writeRollsBack() throws {
        struct Boom: Error {}
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        try db.execute("CREATE TABLE t (x INTEGER)")
        #expect(throws: Boom.self) {
            try db.write { db in
                try db.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try scalar(db, "SELECT count(*) FROM t") == "0")
        #expect(!db.isInTransaction)
    }

    @Test("a nested write is a savepoint: it rolls back alone and commits with the outer one")
    func nestedWrite() throws {
        struct Boom: Error {}
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.write { db in
            try db.execute("INSERT INTO t VALUES (1)")
            _ = try? db.write { db in
                try db.execute("INSERT INTO t VALUES (2)")
                throw Boom()
            }
            try db.write { db in try db.execute("INSERT INTO t VALUES (3)") }
        }
        #expect(try scalar(db, "SELECT group_concat(x) FROM t") == "1,3")
    }

    @Test("a write waits for another connection's write lock (busy timeout) instead of failing")
    func writeWaitsForLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.sqlite3")
        let writer = try Database(path: path)
        try writer.execute("CREATE TABLE t (x INTEGER)")
        let holder = try Database(path: path)
        try holder.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")

        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, DatabaseError>?>(nil)
        // Handed over to the writing thread: a connection is used by one thread at a time.
        let handOver = Mutex<Database?>(writer)
        DispatchQueue(label: "test.busy-writer").async {
            started.signal()
            let result = Result { () throws(DatabaseError) in
                do { try handOver.withLock { writer in try writer?.write { db in try db.execute("INSERT INTO t VALUES (2)") } } }
                catch let error as DatabaseError { throw error }
                catch { throw DatabaseError(code: SQLITE_ERROR, message: "\(error)") }
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        #expect(started.wait(timeout: .now() + 600) == .success, "the writing thread started")
        // The hold: while the lock is held the writer cannot finish; without a busy timeout it
        // would have failed at once and signalled `done` well within this window.
        #expect(done.wait(timeout: .now() + .milliseconds(150)) == .timedOut)
        try holder.execute("COMMIT")
        #expect(done.wait(timeout: .now() + 600) == .success, "the write finished once the lock was released")
        let result = outcome.withLock { $0 }
        #expect(throws: Never.self) { try result?.get() }
        #expect(try scalar(holder, "SELECT group_concat(x) FROM t") == "1,2")
    }

    @Test("with no busy timeout a locked write fails at once with isBusy")
    func busyWithoutTimeout() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.sqlite3")
        let impatient = try Database(path: path, busyTimeout: .zero)
        let holder = try Database(path: path)
        try holder.execute("BEGIN IMMEDIATE")
        let error = #expect(throws: DatabaseError.self) {
            try impatient.write { db in try db.execute("CREATE TABLE t (x)") }
        }
        #expect(error?.isBusy == true)
        try holder.execute("ROLLBACK")
    }

    @Test("lastInsertRowID and changes report the latest statement")
    func rowIDAndChanges() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        try db.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)")
        #expect(db.lastInsertRowID == 3)
        try db.execute("UPDATE t SET x = 0 WHERE x >= 2")
        #expect(db.changes == 2)
    }
}

/// The first column of the first row of `sql`, as text.
func scalar(_ db: Database, _ sql: String) throws -> String? {
    let statement = try db.makeStatement(sql)
    guard try statement.step() else { return nil }
    return statement.string(at: 0)
}
