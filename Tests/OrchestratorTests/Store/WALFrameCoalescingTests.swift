import CSQLite
import Foundation
import Testing

@testable import Orchestrator

/// orchd's VFS (`CSQLiteVFS`): a transaction's WAL frames reach the file in one write, at its
/// commit, and what reaches the file is exactly what SQLite's own VFS would have written.
@Suite("WAL frame coalescing")
struct WALFrameCoalescingTests {
    @Test("connections open with orchd's VFS")
    func connectionsUseTheVFS() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        #expect(Database.vfsName == "orchd-unix")
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        #expect(sqlite3_file_control(db.handle, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK)
        #expect(vfs.map { String(cString: $0.pointee.zName) } == "orchd-unix")
    }

    @Test("a commit that changes many pages writes its frames with two write(2)s: the first frame's header, then the rest")
    func framesInTwoWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.sqlite3")
        let db = try Database(path: path)
        try db.execute("PRAGMA synchronous = NORMAL") // as GroupCommit sets it: no sync at commit
        try db.execute("CREATE TABLE t (a TEXT, b TEXT, c TEXT); CREATE INDEX t_a ON t (a); CREATE INDEX t_b ON t (b); CREATE INDEX t_c ON t (c)")
        // Enough rows that the table and each index have pages of their own to change.
        try db.write { db in
            for row in 0..<2000 { try db.execute("INSERT INTO t VALUES ('a\(row)', 'b\(row)', 'c\(row)')") }
        }
        let walBefore = try fileSize(path + "-wal")
        // The commit runs on this thread: its write(2) calls are this thread's (proc(5), /proc/thread-self/io).
        let writesBefore = try threadWriteCalls()
        try db.write { db in
            try db.execute("INSERT INTO t VALUES ('a0500', 'b1500', 'c0999')")
            try db.execute("INSERT INTO t VALUES ('zzz', 'zzz', 'zzz')")
        }
        let writes = try threadWriteCalls() - writesBefore
        let frames = (try fileSize(path + "-wal") - walBefore) / (4096 + 24)
        #expect(frames >= 4, "the commit changed \(frames) pages; the test needs several")
        #expect(writes == 2, "\(frames) frames took \(writes) write calls; SQLite's own VFS makes \(2 * frames)")
    }

    @Test("committed frames are in the file for a connection of SQLite's own VFS, also after a spilled transaction rolled back")
    func framesVisibleToOtherConnections() throws {
        struct Boom: Error {}
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.sqlite3")
        let db = try Database(path: path)
        try db.execute("PRAGMA synchronous = NORMAL")
        // A cache of 10 pages: the large transactions below spill pages to the WAL before
        // their commit, and one of them is then rolled back.
        try db.execute("PRAGMA cache_size = 10; CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)")
        #expect(throws: Boom.self) {
            try db.write { db in
                try db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) INSERT INTO t (body) SELECT randomblob(3000) FROM n")
                throw Boom()
            }
        }
        // More than the VFS keeps at once (120 KiB): several writes, the last at the commit.
        try db.write { db in
            try db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO t (body) SELECT zeroblob(3000) FROM n")
        }
        try db.write { db in try db.execute("INSERT INTO t (id, body) VALUES (1000, x'01')") }

        var other: OpaquePointer?
        #expect(sqlite3_open_v2(path, &other, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(other) }
        #expect(try query(other, "SELECT count(*), sum(length(body)) FROM t") == "201|600001")
        #expect(try query(other, "PRAGMA integrity_check") == "ok")
        // A checkpoint by the other connection reads every frame back from the file.
        #expect(sqlite3_wal_checkpoint_v2(other, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil) == SQLITE_OK)
        #expect(try query(other, "SELECT count(*) FROM t") == "201")
        // And this connection goes on writing after the other truncated the WAL.
        try db.write { db in try db.execute("INSERT INTO t (id, body) VALUES (1001, x'02')") }
        #expect(try query(other, "SELECT count(*), max(id) FROM t") == "202|1001")
    }

    @Test("a transaction that rewrites the checksums of frames it spilled is in the files as its commit returns")
    func rewrittenChecksumsReachTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.sqlite3")
        let db = try Database(path: path)
        try db.execute("PRAGMA synchronous = NORMAL")
        // A small cache: the inserts spill pages to the WAL, and the updates then change pages
        // already there, so the commit rewrites those frames' headers in place (their
        // checksums), the commit frame's last, with no page after it.
        try db.execute("PRAGMA cache_size = 20; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        try db.write { db in
            try db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) INSERT INTO t (v) SELECT printf('%.200c', 'x') FROM n")
            try db.execute("UPDATE t SET v = 'rewritten' WHERE id <= 2000")
        }
        // What a kill -9 right after the commit leaves: the files as they are, the connection
        // still open (closing it would write and checkpoint).
        let copy = directory.file("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: path, toPath: copy + "/orchd.sqlite3")
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "/orchd.sqlite3-wal")
        var recovered: OpaquePointer?
        #expect(sqlite3_open_v2(copy + "/orchd.sqlite3", &recovered, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(recovered) }
        #expect(try query(recovered, "SELECT count(*), sum(v = 'rewritten') FROM t") == "5000|2000")
        withExtendedLifetime(db) {}
    }

    /// write(2)-family calls made by the calling thread so far (`syscw`, proc(5)).
    private func threadWriteCalls() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("syscw:") }),
              let count = Int(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces))
        else { throw CocoaError(.fileReadCorruptFile) }
        return count
    }

    private func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The first row of `sql` on a raw connection, its columns joined by `|`.
    private func query(_ connection: OpaquePointer?, _ sql: String) throws -> String? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK else {
            throw DatabaseError(code: sqlite3_errcode(connection), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return (0..<sqlite3_column_count(statement)).map { column in
            sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "NULL"
        }.joined(separator: "|")
    }
}
