import CSQLite
import Foundation
import OrchestratorAPI
import Testing
import TestWaitLimits

@testable import Orchestrator

@Suite("Database identity and integrity")
struct DatabaseIdentityTests {
    private func bytes(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Opens `path` the way orchd does (the files first, then SQLite), and returns the refusal.
    private func refusal(_ path: String) -> DatabaseError? {
        #expect(throws: DatabaseError.self) {
            try DatabaseIdentity.checkFiles(atPath: path)
            _ = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
        }
    }

    /// Writes to `destination` the `-wal` of another program's WAL database, taken while its
    /// connection is open so that it is not checkpointed: `rowsOnly` commits only an `INSERT`
    /// into a table checkpointed before, otherwise the table is created in the WAL too.
    private func foreignWAL(to destination: String, in directory: TemporaryDirectory, rowsOnly: Bool) throws {
        let path = directory.file("foreign.db")
        var handle: OpaquePointer?
        // The library's settings must come before the first connection of the process.
        _ = Database.libraryConfigured
        try #require(sqlite3_open(path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        try #require(sqlite3_exec(handle, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0", nil, nil, nil) == SQLITE_OK)
        if rowsOnly {
            try #require(sqlite3_exec(handle, "CREATE TABLE secrets (value TEXT); PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil) == SQLITE_OK)
        }
        let sql = (rowsOnly ? "" : "CREATE TABLE secrets (value TEXT);") + "INSERT INTO secrets VALUES ('hunter2');"
        try #require(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: destination)
        #expect(try bytes(destination).count > 32, "committed frames in it")
    }

    /// An orchd database with `jobs` jobs, closed cleanly (no `-wal` left).
    private func orchdDatabase(_ path: String, jobs: Int) throws {
        let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
        for _ in 0..<jobs {
            _ = try store.insert(JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), submitterUid: 0, at: Date())
        }
    }

    @Test("another program's -wal beside orchd's database is refused, naming the -wal, and neither file changes", arguments: [false, true])
    func foreignWALBesideDatabase(rowsOnly: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        try orchdDatabase(path, jobs: 50)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        try foreignWAL(to: path + "-wal", in: directory, rowsOnly: rowsOnly)
        let before = try bytes(path)
        let walBefore = try bytes(path + "-wal")
        let error = try #require(refusal(path))
        #expect(error.primaryCode == SQLITE_NOTADB)
        #expect(error.message.hasPrefix("\(path)-wal is not the write-ahead log of \(path) ("))
        #expect(error.message.contains("move \(path)-wal (and \(path)-shm) away"))
        #expect(!error.message.contains("\n"), "one line")
        #expect(try bytes(path) == before)
        #expect(try bytes(path + "-wal") == walBefore)
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"), "SQLite never opened it")
        // Moved away as the message says, orchd's database opens with every job.
        try FileManager.default.removeItem(atPath: path + "-wal")
        try DatabaseIdentity.checkFiles(atPath: path)
        let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
        #expect(try scalar(store.database, "SELECT count(*) FROM jobs") == "50")
    }

    @Test("a named pipe or a directory where the database or one of its companions belongs is refused by name, without opening it (a pipe's open would block for ever)",
        arguments: ["", "-wal", "-shm", "-journal"])
    func notRegularFiles(suffix: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        if !suffix.isEmpty { try orchdDatabase(path, jobs: 1) }
        unlink(path + suffix)  // one the database left
        try #require(mkfifo(path + suffix, 0o600) == 0)
        let fifo = try failingIfBlocked(on: path + suffix) {
            #expect(throws: DatabaseError.self) { try DatabaseIdentity.checkFiles(atPath: path) }
        }
        #expect(fifo?.message == "\(path)\(suffix) is a named pipe (FIFO), not a regular file, so orchd leaves it alone; move it away, or give orchd another --state-dir")
        unlink(path + suffix)
        try #require(mkdir(path + suffix, 0o700) == 0)
        let folder = #expect(throws: DatabaseError.self) { try DatabaseIdentity.checkFiles(atPath: path) }
        #expect(folder?.message.hasPrefix("\(path)\(suffix) is a directory, not a regular file") == true, "\(String(describing: folder))")
    }

    @Test("a refusal after SQLite replayed a stray -wal does not checkpoint it into the file")
    func refusalDoesNotCheckpoint() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        try orchdDatabase(path, jobs: 5)
        try foreignWAL(to: path + "-wal", in: directory, rowsOnly: false)
        let before = try bytes(path)
        // Past the file check (as if it had been fooled): SQLite replays the -wal and the
        // identity check sees the other program's tables.
        let error = try #require(#expect(throws: DatabaseError.self) {
            _ = try Database(path: path, verify: DatabaseIdentity.verify)
        })
        #expect(error.message.contains("tables: secrets"))
        #expect(try bytes(path) == before)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a -wal without its database is refused and kept, and no database is created", arguments: ["missing", "empty"])
    func walWithoutDatabase(database: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        if database == "empty" { try Data().write(to: URL(fileURLWithPath: path)) }
        try foreignWAL(to: path + "-wal", in: directory, rowsOnly: false)
        let walBefore = try bytes(path + "-wal")
        let error = try #require(refusal(path))
        #expect(error.primaryCode == SQLITE_NOTADB)
        #expect(error.message == "\(path)-wal exists without its database \(path) (\(database)): a write-ahead log without its database is another program's or left from a damaged install, so orchd leaves it alone and creates no database; put the database back beside it, or move \(path)-wal (and \(path)-shm) away, or give orchd another --state-dir")
        #expect(try bytes(path + "-wal") == walBefore)
        #expect(FileManager.default.fileExists(atPath: path) == (database == "empty"))
        if database == "empty" { #expect(try bytes(path).isEmpty) }
    }

    @Test("an empty -wal without its database (a clean stop's, orchd.db moved away) lets a new database be made")
    func emptyWALWithoutDatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        try Data().write(to: URL(fileURLWithPath: path + "-wal"))
        try DatabaseIdentity.checkFiles(atPath: path)
        let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
        #expect(try store.queueSettings().contains { $0.name.rawValue == "default" })
    }

    @Test("orchd's own -wal left by a crash, with committed transactions not yet checkpointed, is recovered")
    func ownWALRecovered() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        let crashed = directory.file("crashed.db")
        do {
            let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
            try store.database.execute("PRAGMA wal_autocheckpoint = 0")
            for _ in 0..<20 {
                _ = try store.insert(JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), submitterUid: 0, at: Date())
            }
            // What kill -9 leaves: the file and its -wal as they are now, never checkpointed.
            try FileManager.default.copyItem(atPath: path, toPath: crashed)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: crashed + "-wal")
        }
        let walRead = try #require(try WriteAheadLog.read(path: crashed + "-wal"))
        #expect(walRead.committedFrames > 0, "the jobs are only in the -wal")
        try DatabaseIdentity.checkFiles(atPath: crashed)
        let store = try JobStore(database: Database(path: crashed, verify: DatabaseIdentity.verify))
        #expect(try scalar(store.database, "SELECT count(*) FROM jobs") == "20")
    }

    /// Makes an SQLite database of another program with the sqlite3 C API.
    private func foreignDatabase(_ path: String, _ sql: String) throws {
        var handle: OpaquePointer?
        // The library's settings must come before the first connection of the process.
        _ = Database.libraryConfigured
        try #require(sqlite3_open(path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        try #require(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
    }

    @Test("another program's SQLite database is refused in one line, and not one byte of it changes")
    func foreignDatabaseUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        try foreignDatabase(path, "CREATE TABLE contacts (name TEXT, phone TEXT); INSERT INTO contacts VALUES ('a', '1');")
        let before = try bytes(path)
        let error = try #require(refusal(path))
        #expect(error.primaryCode == SQLITE_NOTADB)
        #expect(error.message == "\(path) is an SQLite database of another program (tables: contacts), not orchd's, so orchd leaves it alone; move it away, or give orchd another --state-dir")
        #expect(!error.message.contains("CREATE"), "no schema dump")
        #expect(try bytes(path) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a foreign database with its own application_id is refused by it, even with tables named like orchd's")
    func foreignApplicationID() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        try foreignDatabase(path, "PRAGMA application_id = 42; CREATE TABLE jobs (x); CREATE TABLE schema_migrations (name, applied_at);")
        let before = try bytes(path)
        let error = try #require(refusal(path))
        #expect(error.message.contains("is the SQLite database of another program (application_id 0x2A, orchd's is 0x4F524344)"))
        #expect(try bytes(path) == before)
    }

    @Test("a file that is not SQLite at all is refused and left as it was", arguments: ["random", "text"])
    func notSQLite(kind: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        let content = kind == "text"
            ? Data("# my notes\nnothing to see here\n".utf8)
            : Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        try content.write(to: URL(fileURLWithPath: path))
        let error = try #require(refusal(path))
        #expect(error.message == "\(path) is not an SQLite database (it holds other data), so orchd leaves it alone; move it away, or give orchd another --state-dir")
        #expect(try bytes(path) == content)
    }

    @Test("an empty file is a new database, and a new database gets orchd's application_id")
    func emptyFileIsNew() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        try #require(FileManager.default.createFile(atPath: path, contents: Data()))
        let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
        #expect(try scalar(store.database, "PRAGMA application_id") == String(DatabaseIdentity.applicationID))
        #expect(DatabaseIdentity.applicationID == 0x4F52_4344)
    }

    @Test("an orchd database from before application_id is adopted: the mark is set, its jobs kept")
    func adoptsUnmarkedOrchdDatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        do {
            // What orchd made before v2: the v1 schema, recorded, application_id 0.
            var old = Migrator()
            old.registerMigration("v1-jobs") { db in
                try db.execute(Migrations.v1JobsSQL)
                try db.execute("INSERT INTO durability_barrier (id, commits) VALUES (1, 0)")
            }
            let db = try Database(path: path)
            try old.migrate(db)
            let store = try JobStore(database: db)  // runs every migration; undo its mark to get the old file
            _ = try store.insert(JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), submitterUid: 0, at: Date())
            try db.execute("PRAGMA application_id = 0; DELETE FROM schema_migrations WHERE name = 'v3-application-id'")
        }
        let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
        #expect(try scalar(store.database, "PRAGMA application_id") == String(DatabaseIdentity.applicationID))
        // v3 ran again, after v4: compared as a set.
        #expect(Set(try Migrations.migrator.appliedMigrations(store.database)) == Set(Migrations.migrator.migrations.map(\.name)))
        #expect(try scalar(store.database, "SELECT count(*) FROM jobs") == "1")
    }

    @Test("a damaged orchd database is refused with the way to recover it")
    func damagedDatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        do {
            let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
            let spec = JobSpec(command: .argv(["echo", String(repeating: "x", count: 500)]), cwd: "/", environment: ["PATH": "/bin"])
            try store.database.write { _ in
                for _ in 0..<2_000 { _ = try store.insert(spec, submitterUid: 0, at: Date()) }
            }
            try store.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        // Overwrite pages in the middle of the file, as a bad disk or a stray write would.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        let pageSize: UInt64 = 4096
        let middle = (size / 2 / pageSize) * pageSize
        try handle.seek(toOffset: middle)
        handle.write(Data((0..<Int(pageSize * 4)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
        try handle.close()

        let error = try #require(refusal(path))
        #expect(error.primaryCode == SQLITE_CORRUPT)
        #expect(error.message.hasPrefix("\(path) is damaged ("))
        #expect(error.message.contains("sqlite3 \(path) .dump | sed '$s/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 \(path).recovered"))
        #expect(!error.message.contains("\n"), "one line")
    }

    @Test("a quick check out of budget reports that it stopped early, not damage")
    func budget() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.db")
        let store = try JobStore(database: Database(path: path))
        try store.database.write { _ in
            for _ in 0..<2_000 {
                _ = try store.insert(JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), submitterUid: 0, at: Date())
            }
        }
        #expect(try DatabaseIdentity.quickCheck(store.database, budget: .zero) == false)
        #expect(try DatabaseIdentity.quickCheck(store.database, budget: nil) == true)
        // The handler is gone afterwards: ordinary statements are not cut off.
        #expect(try scalar(store.database, "SELECT count(*) FROM jobs") == "2000")
    }
}
