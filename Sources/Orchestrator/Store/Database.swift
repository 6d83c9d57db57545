import CSQLite
import CSQLiteVFS
import Dispatch

/// One connection to orchd's SQLite database, configured for durability: WAL journal,
/// `synchronous=FULL`, a busy timeout, and foreign keys on.
///
/// Write through ``write(_:)``, one `BEGIN IMMEDIATE` transaction that commits when the body
/// returns and rolls back when it throws:
/// ```swift
/// let db = try Database(path: stateDirectory + "/orchd.sqlite3")
/// try db.write { db in
///     try db.execute("UPDATE jobs SET priority = 1 WHERE id = 7")
/// }
/// ```
/// Not thread-safe (opened with `SQLITE_OPEN_NOMUTEX`), so not `Sendable`: it has one owner at a
/// time (the ``Scheduler`` actor), which the compiler checks.
public final class Database {
    /// The path of the database file.
    public let path: String
    let handle: OpaquePointer
    private var statements: [StatementKey: Statement] = [:]
    /// The automatic checkpoint's threshold and the first fsync failure of a checkpoint
    /// (``checkpointSyncFailure``); read by the WAL hook during commits, so it lives as long as
    /// the connection.
    private let checkpointState: UnsafeMutablePointer<orchd_checkpoint_state>
    /// The connection's busy timeout in ms (set at open, or by ``setBusyTimeout(_:)``);
    /// restored after a checkpoint or a write that waits less.
    private var busyTimeoutMilliseconds: Int32

    /// Opens (creating if needed) the database at `path` and configures the connection.
    ///
    /// SQLite opens lazily, so a file that is not a database is detected by the first pragma
    /// and reported here rather than on first use.
    /// - Parameters:
    ///   - path: the database file; its directory must exist.
    ///   - busyTimeout: how long a statement waits for another connection's lock before failing
    ///     with `SQLITE_BUSY` (<https://www.sqlite.org/c3ref/busy_timeout.html>); default 5 s,
    ///     resolution 1 ms.
    ///   - verify: runs on the new connection before it writes anything (the switch to WAL
    ///     rewrites the file's header), to refuse a file that is not ours or is damaged
    ///     (``DatabaseIdentity/verify(_:)``); what it throws, `init` throws.
    /// - Throws: ``DatabaseError``: `SQLITE_CANTOPEN` when the file cannot be opened or
    ///   created, `SQLITE_NOTADB` when it is not an SQLite database, `SQLITE_BUSY` when another
    ///   connection blocks the switch to WAL past the timeout, or an error with the journal mode
    ///   SQLite reported when WAL is refused (<https://www.sqlite.org/wal.html>).
    public init(
        path: String, busyTimeout: Duration = .seconds(5), verify: ((Database) throws(DatabaseError) -> Void)? = nil
    ) throws(DatabaseError) {
        _ = Self.libraryConfigured
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let code = sqlite3_open_v2(path, &connection, flags, Self.vfsName)
        guard code == SQLITE_OK, let connection else {
            let error = DatabaseError(code: code, connection: connection, sql: nil)
            sqlite3_close_v2(connection) // a handle is returned even on failure and must be closed
            throw DatabaseError(code: error.code, message: "cannot open '\(path)': \(error.message)")
        }
        self.path = path
        self.handle = connection
        checkpointState = .allocate(capacity: 1)
        checkpointState.initialize(to: orchd_checkpoint_state(threshold: Self.checkpointPages, sync_failure: 0))
        busyTimeoutMilliseconds = Self.milliseconds(busyTimeout)
        // From here on, a throw runs deinit, which closes the connection.
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, busyTimeoutMilliseconds)
        if let verify {
            // A refused file must not be written: without this, the close after a refusal
            // checkpoints whatever SQLite replayed from the -wal into the file.
            orchd_sqlite3_set_no_checkpoint_on_close(connection, 1)
            try verify(self)
            orchd_sqlite3_set_no_checkpoint_on_close(connection, 0)
        }
        try configure()
    }

    /// Whether SQLite took orchd's settings of the library itself, made once per process before
    /// its first connection opens (`sqlite3_config` is refused after that, and then SQLite's
    /// defaults stay: slower, never wrong).
    ///
    /// - Allocation statistics off: SQLite otherwise takes a process-wide mutex around every
    ///   `malloc` and `free` to count them; orchd never reads the counts. In a batch submit
    ///   the lock and unlock were a tenth of the daemon's CPU.
    /// - Statement journals in memory up to ``statementJournalSpillBytes`` (SQLite's default:
    ///   64 KiB). A statement inside a transaction that fires triggers keeps the pages it
    ///   changes in a statement journal, so it can be undone alone; past the limit the journal
    ///   moves to a temporary file, which the rest of the transaction then writes page by page:
    ///   a batch of 1,000 submits wrote 17 `pwrite`s a job to it, and a drain 10. A statement
    ///   of orchd's hot path changes a few dozen pages; one that changes more (a prune of many
    ///   jobs) still spills.
    static let libraryConfigured: Bool = {
        orchd_sqlite3_config_memory_status(0) == SQLITE_OK
            && orchd_sqlite3_config_statement_journal_spill(statementJournalSpillBytes) == SQLITE_OK
    }()

    /// The VFS connections open with: orchd's (`CSQLiteVFS`), which writes a transaction's WAL
    /// frames with two write(2)s rather than two per frame (docs/ARCHITECTURE.md, "WAL writes");
    /// `nil`, SQLite's default, when it could not be registered (slower, never wrong).
    static let vfsName: String? = orchd_sqlite_vfs_register() == SQLITE_OK ? ORCHD_SQLITE_VFS_NAME : nil

    /// The statement journal's spill threshold: 120 KiB, under 128 KiB. The in-memory journal
    /// keeps its pages in chunks of the threshold's size and writes them to the temporary file
    /// a chunk per call when it spills, and the unix VFS of SQLite 3.40 (Debian 12's) writes at
    /// most 128 KiB − 1 bytes a call, taking the size modulo 128 KiB: a 4 MiB threshold made
    /// the first write 0 bytes, reported as `SQLITE_FULL`, so a prune whose statement changed
    /// more than 4 MiB of pages failed with "the disk is full" on a disk with room.
    static let statementJournalSpillBytes: Int32 = 120 << 10

    deinit {
        statements.removeAll() // finalizes the cached statements first
        // The hook goes first: a close deferred past this deinit must not read freed state.
        sqlite3_wal_hook(handle, nil, nil)
        // After a checkpoint's fsync failed, the WAL may hold the only good copy: a close
        // must not checkpoint it away (and delete it) on the strength of a later fsync.
        if checkpointState.pointee.sync_failure != 0 { orchd_sqlite3_set_no_checkpoint_on_close(handle, 1) }
        // close_v2 defers the close until statements still held elsewhere are finalized.
        sqlite3_close_v2(handle)
        checkpointState.deallocate()
    }

    /// WAL pages that start a checkpoint, as SQLite's own default.
    static let checkpointPages: Int32 = 1000

    /// The first fsync failure of one of this connection's checkpoints (its automatic ones and
    /// ``checkpointTruncatingLog(waitingAtMost:)``), or `nil`. Once set it stays: what that
    /// checkpoint wrote may be lost, and a later fsync cannot tell (Linux reports a writeback
    /// error once), so nothing this connection committed can be promised durable again.
    public var checkpointSyncFailure: DatabaseError? {
        let code = checkpointState.pointee.sync_failure
        guard code != 0 else { return nil }
        return DatabaseError(code: code, message: "a checkpoint could not sync the database to disk (\(String(cString: sqlite3_errstr(code))))")
    }

    private func configure() throws(DatabaseError) {
        let sql = "PRAGMA journal_mode = WAL"
        let statement = try Statement(connection: handle, sql: sql, persistent: false)
        guard try statement.step(), let mode = statement.string(at: 0) else {
            throw DatabaseError(code: SQLITE_ERROR, message: "PRAGMA journal_mode returned no row", sql: sql)
        }
        // SQLite answers with the mode in force; it may refuse WAL (e.g. for :memory:).
        guard mode.lowercased() == "wal" else {
            throw DatabaseError(
                code: SQLITE_ERROR, message: "the journal mode is '\(mode)', not 'wal': \(path) does not support WAL",
                sql: sql)
        }
        // FULL: in WAL mode, sync the WAL at every commit, so an acknowledged write survives
        // power loss (https://www.sqlite.org/pragma.html#pragma_synchronous).
        try execute("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")
        // Replaces the default automatic checkpoint, whose fsync failures go unseen.
        orchd_sqlite3_install_checkpoint_hook(handle, checkpointState)
    }

    // MARK: - Statements

    /// Runs one or more SQL statements separated by semicolons (`sqlite3_exec`), discarding
    /// any rows. For a script without parameters: schema changes, pragmas.
    /// - Throws: ``DatabaseError`` for the first statement that fails; the ones before it stay
    ///   executed (wrap in ``write(_:)`` to make the whole script atomic).
    public func execute(_ sql: String) throws(DatabaseError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? DatabaseError.codeDescription(code)
            throw DatabaseError(code: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Runs one statement without results through the statement cache: for the transaction
    /// statements every write runs (`BEGIN`, `COMMIT`, savepoints), which `execute` would
    /// compile again each time.
    /// - Throws: ``DatabaseError`` when SQLite cannot compile or run `sql`.
    func executeCached(_ sql: String) throws(DatabaseError) {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.step()
    }

    /// Returns the prepared statement for `sql`, compiling it on first use and keeping it for
    /// the connection's life. The statement comes back reset with all parameters `NULL`.
    ///
    /// Do not hold one across another call for the same text: that call resets it.
    /// - Parameter sql: exactly one SQL statement; the cache key is this exact text.
    /// - Returns: the statement, ready to bind and step.
    /// - Throws: ``DatabaseError`` when SQLite cannot compile `sql`.
    public func cachedStatement(_ sql: String) throws(DatabaseError) -> Statement {
        if let statement = statements[StatementKey(sql)] {
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: handle, sql: sql, persistent: true)
        statements[StatementKey(sql)] = statement
        return statement
    }

    /// Compiles `sql` into a new statement that is not cached, for one-off queries.
    /// - Throws: ``DatabaseError`` when SQLite cannot compile `sql`.
    public func makeStatement(_ sql: String) throws(DatabaseError) -> Statement {
        try Statement(connection: handle, sql: sql, persistent: false)
    }

    /// The rowid of the latest successful `INSERT` on this connection
    /// (<https://www.sqlite.org/c3ref/last_insert_rowid.html>).
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the latest `INSERT`, `UPDATE` or `DELETE` on this connection
    /// (<https://www.sqlite.org/c3ref/changes.html>).
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Whether a transaction is open on this connection (not in autocommit mode).
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body`, interrupting its SQLite statements once `limit` has passed
    /// (`sqlite3_progress_handler`, <https://www.sqlite.org/c3ref/progress_handler.html>): a
    /// statement still running then fails with `SQLITE_INTERRUPT`.
    /// - Parameters:
    ///   - limit: the longest `body` may keep SQLite busy.
    ///   - body: the work.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; ``DatabaseError`` with `SQLITE_INTERRUPT` when cut off.
    public func interrupting<T>(after limit: Duration, _ body: () throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        let deadline = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        deadline.pointee = DispatchTime.now().uptimeNanoseconds + UInt64(limit.components.seconds) * 1_000_000_000
            + UInt64(limit.components.attoseconds / 1_000_000_000)
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            deadline.deallocate()
        }
        // Every 10,000 virtual machine instructions, a clock read: well under 1% of the work.
        sqlite3_progress_handler(handle, 10_000, { context in
            guard let context else { return 0 }
            return DispatchTime.now().uptimeNanoseconds > context.assumingMemoryBound(to: UInt64.self).pointee ? 1 : 0
        }, deadline)
        return try body()
    }

    /// Keeps the WAL small while the file system is short of space, or lets it grow as usual.
    ///
    /// SQLite checkpoints by itself once the WAL holds 1,000 pages (about 4 MiB), and reuses
    /// a WAL's space only after a checkpoint: on a file system with less room than that, the
    /// WAL fills it and the store stays full. Short of space, the WAL is checkpointed every
    /// ``shortOfSpaceCheckpointPages`` pages and cut back to ``shortOfSpaceLogBytes`` when it
    /// restarts (the checkpoint hook's threshold, `PRAGMA journal_size_limit`,
    /// <https://www.sqlite.org/pragma.html>); more checkpoints cost more syncs of the database
    /// file, so the usual sizes return with the space.
    /// - Parameter short: whether the file system is short of space.
    /// - Throws: ``DatabaseError`` when SQLite refuses the pragmas (it does not for a full disk).
    public func setShortOfSpace(_ short: Bool) throws(DatabaseError) {
        // The threshold is the hook's own: `PRAGMA wal_autocheckpoint` would put SQLite's back.
        try execute(short ? "PRAGMA journal_size_limit = \(Self.shortOfSpaceLogBytes)" : "PRAGMA journal_size_limit = -1")
        checkpointState.pointee.threshold = short ? Self.shortOfSpaceCheckpointPages : Self.checkpointPages
    }

    /// WAL pages between two checkpoints while short of space (256 KiB of 4 KiB pages).
    static let shortOfSpaceCheckpointPages: Int32 = 64
    /// Sets how long statements wait for another connection's lock from now on
    /// (`sqlite3_busy_timeout`, <https://www.sqlite.org/c3ref/busy_timeout.html>), in place of
    /// the one given at open.
    /// - Parameter timeout: the wait, resolution 1 ms.
    public func setBusyTimeout(_ timeout: Duration) {
        busyTimeoutMilliseconds = Self.milliseconds(timeout)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    /// `duration` in whole milliseconds, as `sqlite3_busy_timeout` takes it.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Runs `body` with statements waiting at most `timeout` for another connection's lock
    /// (`sqlite3_busy_timeout`, <https://www.sqlite.org/c3ref/busy_timeout.html>) instead of
    /// the connection's own busy timeout, which is set again afterwards.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func withBusyTimeout<T, Failure: Error>(_ timeout: Duration, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        sqlite3_busy_timeout(handle, Self.milliseconds(timeout))
        defer { sqlite3_busy_timeout(handle, busyTimeoutMilliseconds) }
        return try body()
    }

    /// What the WAL file is cut back to when it restarts while short of space, in bytes.
    static let shortOfSpaceLogBytes = 256 << 10

    /// Copies every committed page of the WAL into the database file and truncates the WAL
    /// to zero bytes (`sqlite3_wal_checkpoint_v2` in `TRUNCATE` mode,
    /// <https://www.sqlite.org/c3ref/wal_checkpoint_v2.html>). The WAL otherwise keeps its
    /// largest size (up to the auto-checkpoint's 1,000 pages, about 4 MiB) on disk for good.
    /// - Parameter wait: how long to wait for another connection's writer or readers.
    /// - Returns: `false` when another connection kept part of the WAL in use past `wait`
    ///   (what could be copied is; the WAL keeps its size).
    /// - Throws: ``DatabaseError`` for an I/O error or a full disk.
    public func checkpointTruncatingLog(waitingAtMost wait: Duration) throws(DatabaseError) -> Bool {
        let code = withBusyTimeout(wait) { sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil) }
        if code & 0xFF == SQLITE_BUSY { return false }
        guard code == SQLITE_OK else {
            let extended = sqlite3_extended_errcode(handle)
            if orchd_is_sync_failure(extended) != 0 && checkpointState.pointee.sync_failure == 0 {
                checkpointState.pointee.sync_failure = extended
            }
            throw DatabaseError(code: extended, connection: handle, sql: nil)
        }
        return true
    }

    // MARK: - Transactions

    /// Runs `body` in one write transaction: `BEGIN IMMEDIATE`, then `COMMIT` when `body`
    /// returns, or `ROLLBACK` and rethrow when it throws.
    ///
    /// `IMMEDIATE` takes the write lock up front, so a busy database makes `BEGIN` wait (busy
    /// timeout) instead of failing later with `SQLITE_BUSY_SNAPSHOT`
    /// (<https://www.sqlite.org/lang_transaction.html>). Called inside another transaction
    /// it becomes a savepoint, so store calls can be grouped into one commit (group commit):
    /// its changes roll back alone on throw, and commit with the outer transaction.
    /// - Parameter body: the work; receives this database.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (after rolling back), or ``DatabaseError`` when `BEGIN` or
    ///   `COMMIT` fails (busy past the timeout, disk full, I/O error).
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        if isInTransaction { return try savepoint(body) }
        try executeCached("BEGIN IMMEDIATE")
        return try finishTransaction(body)
    }

    /// Runs `body` in one deferred read transaction, so all its queries see one snapshot
    /// (<https://www.sqlite.org/isolation.html>). Inside another transaction it simply runs.
    /// - Parameter body: the work; receives this database.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or ``DatabaseError`` when `BEGIN` or `COMMIT` fails.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        if isInTransaction { return try body(self) }
        try executeCached("BEGIN DEFERRED")
        return try finishTransaction(body)
    }

    /// Whether a query answers yes: `sql` is one `SELECT EXISTS (...)` (one row, one column,
    /// 0 or 1), run in a read transaction with `values` bound to its parameters in order.
    /// - Throws: ``DatabaseError`` when the statement cannot be prepared, bound or stepped.
    public func exists(_ sql: String, _ values: [DatabaseValue]) throws -> Bool {
        try read { db in
            let statement = try db.cachedStatement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            _ = try statement.step()
            return statement.int64(at: 0) != 0
        }
    }

    /// How many transactions and savepoints of this connection have been rolled back (their
    /// body or `COMMIT` threw). A row written and read inside one that rolled back is gone,
    /// and its `AUTOINCREMENT` ID is given again to the next row: a cache of rows by ID read
    /// inside a transaction drops what it holds when this changes.
    public private(set) var rollbacks = 0

    private func finishTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        let value: T
        do {
            value = try body(self)
            try executeCached("COMMIT")
        } catch {
            rollbacks += 1
            rollback()
            throw error
        }
        return value
    }

    private func savepoint<T>(_ body: (Database) throws -> T) throws -> T {
        try executeCached("SAVEPOINT orchd_nested")
        do {
            let value = try body(self)
            try executeCached("RELEASE orchd_nested")
            return value
        } catch {
            rollbacks += 1
            if isInTransaction { try? execute("ROLLBACK TO orchd_nested; RELEASE orchd_nested") }
            throw error
        }
    }

    private func rollback() {
        // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) already rolled the transaction back:
        // https://www.sqlite.org/lang_transaction.html#response_to_errors_within_a_transaction
        if isInTransaction { try? execute("ROLLBACK") }
    }

    /// The statement cache's key: the SQL text, hashed by its length and its first and last
    /// bytes rather than whole. The scheduler looks up a dozen statements a job, some of
    /// 500 bytes (a job row's column list), and hashing every byte was about a tenth of its
    /// instructions; texts alike at both ends only share a bucket, since equality still
    /// compares them in full (and is immediate for the same stored text).
    private struct StatementKey: Hashable {
        let sql: String

        init(_ sql: String) { self.sql = sql }

        func hash(into hasher: inout Hasher) {
            var sql = sql
            sql.withUTF8 { bytes in
                hasher.combine(bytes.count)
                let edge = min(bytes.count, 48)
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.prefix(edge))))
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(edge))))
            }
        }
    }
}
