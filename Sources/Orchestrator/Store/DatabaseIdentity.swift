import CSQLite
import Foundation

/// Recognizes orchd's own database file, and a damaged one, before anything is written to it.
///
/// orchd marks its databases with ``applicationID`` in the SQLite header
/// (`PRAGMA application_id`, <https://www.sqlite.org/pragma.html#pragma_application_id>); the
/// migration `v3-application-id` sets it on a new database and on one made before the mark
/// existed. ``verify(_:)`` runs on a fresh connection before the switch to WAL (which would
/// rewrite the header), and only reads:
/// - an empty file or none: a new database;
/// - the mark: orchd's; then `PRAGMA quick_check` must pass;
/// - no mark (0) but orchd's tables and `schema_migrations` with orchd's first migration:
///   orchd's from before the mark, adopted (the migration sets the mark);
/// - anything else: not orchd's, refused with one line saying what the file is.
///
/// ``checkFiles(atPath:)`` runs first, before SQLite opens the file at all, with plain reads:
/// SQLite replays an `-wal` file on the first read whatever database it came from (nothing in
/// a WAL names its database), and the checkpoint when the connection closes writes it into
/// the database file; with no database file, it deletes the `-wal`.
public enum DatabaseIdentity {
    /// `PRAGMA application_id` of an orchd database: 0x4F524344, "ORCD" in ASCII
    /// (1330791236). Also documented in `schema.sql` and README.
    public static let applicationID: Int32 = 0x4F52_4344

    /// The tables every orchd database has had since its first migration.
    static let orchdTables: Set<String> = ["schema_migrations", "jobs", "job_attempts", "queues", "events"]

    /// How long the start-up `quick_check` may take. It reads the whole file: about 4 s for
    /// 1,000,000 queued jobs (220 MB) on a 2-core machine, and with the counts kept in
    /// `job_counts` it was all a restart at that size spent before READY. Past this budget
    /// the start goes on, and ``quickCheck(_:budget:)`` without a budget runs in the
    /// background instead. 100 ms still checks a database of some tens of MB completely
    /// before anything is served, and keeps a restart well within a second at any size.
    public static let startupCheckBudget: Duration = .milliseconds(100)

    /// Checks that the database on `db` is orchd's (or new) and not damaged, without writing;
    /// the whole file is checked.
    /// - Throws: see ``verify(_:checkBudget:)``.
    public static func verify(_ db: Database) throws(DatabaseError) {
        _ = try verify(db, checkBudget: nil)
    }

    /// Checks that the database on `db` is orchd's (or new) and not damaged, without writing.
    /// - Parameter checkBudget: the longest the `quick_check` may take; `nil`: no limit.
    /// - Returns: whether the `quick_check` covered the whole file (false: it ran out of
    ///   budget before finding anything wrong; check the rest with ``quickCheck(_:budget:)``).
    /// - Throws: ``DatabaseError`` with a one-line message that says what the file is and
    ///   what to do: `SQLITE_NOTADB` for a file that is not SQLite or is another program's
    ///   database, `SQLITE_CORRUPT` for a damaged orchd database, or SQLite's own error.
    @discardableResult
    public static func verify(_ db: Database, checkBudget: Duration?) throws(DatabaseError) -> Bool {
        let path = db.path
        let id: Int64
        let tables: [String]
        do throws(DatabaseError) {
            id = try integer(db, "PRAGMA application_id")
            tables = try strings(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        } catch where error.primaryCode == SQLITE_NOTADB {
            throw DatabaseError(
                code: error.code,
                message: "\(path) is not an SQLite database (it holds other data), so orchd leaves it alone; move it away, or give orchd another --state-dir")
        } catch where error.isCorrupt {
            throw damaged(path, detail: error.message)
        }
        if id == Int64(applicationID) {
            return try quickCheck(db, budget: checkBudget)
        }
        if id != 0 {
            throw DatabaseError(
                code: SQLITE_NOTADB,
                message: "\(path) is the SQLite database of another program (application_id \(hex(id)), orchd's is \(hex(Int64(applicationID)))), so orchd leaves it alone; move it away, or give orchd another --state-dir")
        }
        if tables.isEmpty { return true }  // new: nothing in it yet
        if orchdTables.isSubset(of: tables),
           (try? strings(db, "SELECT name FROM schema_migrations ORDER BY rowid LIMIT 1")) == ["v1-jobs"] {
            // orchd's, from before the mark: migration v3-application-id adopts it.
            return try quickCheck(db, budget: checkBudget)
        }
        let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", ..." : "")
        throw DatabaseError(
            code: SQLITE_NOTADB,
            message: "\(path) is an SQLite database of another program (tables: \(shown)), not orchd's, so orchd leaves it alone; move it away, or give orchd another --state-dir")
    }

    /// Checks the database file at `path` and its `-wal` with plain reads, before SQLite opens
    /// either (SQLite's first read would replay the `-wal`, and its close would checkpoint it
    /// into the file). Writes nothing.
    ///
    /// Refuses:
    /// - a `-wal` that is not empty without the database (missing or empty): another
    ///   program's, or left from a damaged install; SQLite would delete it;
    /// - a file without the SQLite header string, or with another program's `application_id`
    ///   (the big-endian 32-bit integer at byte 68 of the header);
    /// - a `-wal` whose committed frames SQLite would replay but that is not this database's:
    ///   another page size, a page 1 without orchd's `application_id` (or, for a database from
    ///   before the mark, with a different one), or a database smaller than the file (orchd
    ///   never shrinks its file: no `VACUUM`, no `auto_vacuum`). A `-wal` with nothing SQLite
    ///   would replay (no valid header or no commit frame) changes nothing and is left to SQLite.
    ///
    /// File format: <https://www.sqlite.org/fileformat2.html>.
    /// - Throws: ``DatabaseError``: `SQLITE_NOTADB` with one line naming the file and what to
    ///   do; `SQLITE_CANTOPEN` when a file cannot be read.
    public static func checkFiles(atPath path: String) throws(DatabaseError) {
        // SQLite would open each as it is: a named pipe blocks the open for ever (no log line,
        // deaf to SIGTERM), a directory fails with a message that names neither.
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            var info = stat()
            guard stat(file, &info) == 0, info.st_mode & S_IFMT != S_IFREG else { continue }
            throw DatabaseError(
                code: SQLITE_CANTOPEN,
                message: "\(file) is \(fileKind(info.st_mode)), not a regular file, so orchd leaves it alone; move it away, or give orchd another --state-dir")
        }
        let walPath = path + "-wal"
        let fileSize = size(path)
        let walSize = size(walPath)
        guard let fileSize, fileSize > 0 else {
            // An empty log holds nothing to replay: a clean stop leaves one (truncated at its
            // checkpoint), so moving only orchd.db away must start afresh.
            if let walSize, walSize > 0 {
                throw DatabaseError(
                    code: SQLITE_NOTADB,
                    message: "\(walPath) exists without its database \(path) (\(fileSize == nil ? "missing" : "empty")): a write-ahead log without its database is another program's or left from a damaged install, so orchd leaves it alone and creates no database; put the database back beside it, or move \(walPath) (and \(path)-shm) away, or give orchd another --state-dir")
            }
            return  // a new database
        }
        let header: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            header = [UInt8](try handle.read(upToCount: 100) ?? Data())
        } catch {
            throw DatabaseError(code: SQLITE_CANTOPEN, message: "cannot read \(path): \(error.localizedDescription)")
        }
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw DatabaseError(
                code: SQLITE_NOTADB,
                message: "\(path) is not an SQLite database (it holds other data), so orchd leaves it alone; move it away, or give orchd another --state-dir")
        }
        let id = Int32(bitPattern: WriteAheadLog.bigEndian(header, 68))
        if id != 0 && id != applicationID {
            throw DatabaseError(
                code: SQLITE_NOTADB,
                message: "\(path) is the SQLite database of another program (application_id \(hex(Int64(id))), orchd's is \(hex(Int64(applicationID)))), so orchd leaves it alone; move it away, or give orchd another --state-dir")
        }
        guard walSize != nil else { return }
        let wal: WriteAheadLog?
        do {
            wal = try WriteAheadLog.read(path: walPath)
        } catch {
            throw DatabaseError(code: SQLITE_CANTOPEN, message: "cannot read \(walPath): \(error.localizedDescription)")
        }
        guard let wal, wal.committedFrames > 0 else { return }  // SQLite replays nothing from it
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        var reason: String?
        if wal.pageSize != pageSize {
            reason = "its pages are \(wal.pageSize) bytes, the database's \(pageSize)"
        } else if let pageOne = wal.pageOneHeader {
            let walID = Int32(bitPattern: WriteAheadLog.bigEndian(pageOne, 68))
            if !pageOne.starts(with: Array("SQLite format 3\0".utf8)) {
                reason = "its page 1 is not an SQLite database header"
            } else if walID != applicationID && !(walID == 0 && id == 0) {
                reason = "it would make the database one with application_id \(hex(Int64(walID))), orchd's is \(hex(Int64(applicationID)))"
            }
        }
        if reason == nil, wal.databasePages < fileSize / Int64(pageSize) {
            reason = "it describes a database of \(wal.databasePages) pages, smaller than the \(fileSize / Int64(pageSize)) pages of \(path)"
        }
        if let reason {
            throw DatabaseError(
                code: SQLITE_NOTADB,
                message: "\(walPath) is not the write-ahead log of \(path) (\(reason)); SQLite would write it into the database, so orchd leaves both alone; if it is another program's, move \(walPath) (and \(path)-shm) away, or give orchd another --state-dir")
        }
    }

    /// What a file that is not a regular file is, for a message: `a directory`, `a named
    /// pipe (FIFO)`, ...
    static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a named pipe (FIFO)"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        default: "not a regular file"
        }
    }

    /// The size in bytes of the file at `path`; `nil` when there is none.
    private static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// `PRAGMA quick_check` (<https://www.sqlite.org/pragma.html#pragma_quick_check>): the
    /// b-trees and records are well formed. O(N) in the file's size, without the index
    /// cross-check of `integrity_check`.
    /// - Parameters:
    ///   - db: the connection.
    ///   - budget: the longest the check may take; `nil`: no limit.
    /// - Returns: `true` when the whole file was checked, `false` when the budget ran out
    ///   first (nothing wrong found so far).
    /// - Throws: ``DatabaseError`` (`SQLITE_CORRUPT`) naming the first problems, with the way
    ///   out; or SQLite's own error.
    @discardableResult
    public static func quickCheck(_ db: Database, budget: Duration?) throws(DatabaseError) -> Bool {
        let problems: [String]
        do throws(DatabaseError) {
            if let budget {
                problems = try db.interrupting(after: budget) { () throws(DatabaseError) in try strings(db, "PRAGMA quick_check(3)") }
            } else {
                problems = try strings(db, "PRAGMA quick_check(3)")
            }
        } catch where error.primaryCode == SQLITE_INTERRUPT {
            return false
        } catch where error.isCorrupt {
            throw damaged(db.path, detail: error.message)
        }
        guard problems == ["ok"] else {
            throw damaged(db.path, detail: problems.joined(separator: "; "))
        }
        return true
    }

    /// The one-line refusal of a damaged database, with the way out: `.dump`, as README has it,
    /// not `.recover`, which Debian 12's sqlite3 lacks the `sqlite_dbpage` table for (it
    /// prints an error, exits 0 and leaves a copy without a `jobs` table).
    private static func damaged(_ path: String, detail: String) -> DatabaseError {
        let oneLine = detail.split(whereSeparator: \.isNewline).joined(separator: "; ")
        return DatabaseError(
            code: SQLITE_CORRUPT,
            message: "\(path) is damaged (\(oneLine)); orchd will not use it. Stop orchd, keep a copy of \(path)*, and copy out what SQLite can read: sqlite3 \(path) .dump | sed '$s/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 \(path).recovered; check the copy (sqlite3 \(path).recovered 'SELECT count(*) FROM jobs') before moving it to \(path) (README: 'A damaged database')")
    }

    private static func hex(_ value: Int64) -> String {
        "0x" + String(UInt32(truncatingIfNeeded: value), radix: 16, uppercase: true)
    }

    private static func integer(_ db: Database, _ sql: String) throws(DatabaseError) -> Int64 {
        let statement = try db.makeStatement(sql)
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    private static func strings(_ db: Database, _ sql: String) throws(DatabaseError) -> [String] {
        let statement = try db.makeStatement(sql)
        var rows: [String] = []
        while try statement.step() { rows.append(statement.string(at: 0) ?? "") }
        return rows
    }
}
