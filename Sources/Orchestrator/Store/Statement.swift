import CSQLite

/// A prepared SQL statement (`sqlite3_stmt`): bind values, step through rows, read columns.
///
/// Parameter indexes start at 1 and column indexes at 0, as in SQLite's C API
/// (<https://www.sqlite.org/c3ref/bind_blob.html>, <https://www.sqlite.org/c3ref/column_blob.html>).
/// Get one from ``Database/cachedStatement(_:)``, which resets it for you:
/// ```swift
/// let statement = try db.cachedStatement("SELECT id FROM jobs WHERE queue = ?")
/// try statement.bind(["default"])
/// while try statement.step() { ids.append(statement.int64(at: 0)) }
/// ```
/// Not thread-safe, so not `Sendable`: it belongs to its ``Database`` and that one's owner.
public final class Statement {
    /// The SQL text the statement was prepared from.
    public let sql: String
    let handle: OpaquePointer

    /// Prepares one statement.
    /// - Throws: ``DatabaseError`` when SQLite cannot compile `sql`, or `SQLITE_MISUSE` when
    ///   `sql` holds more than one statement (use ``Database/execute(_:)`` for scripts).
    init(connection: OpaquePointer, sql: String, persistent: Bool) throws(DatabaseError) {
        var statement: OpaquePointer?
        var trailing = ""
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection, text, -1, flags, &statement, &tail)
            if let tail { trailing = String(cString: tail) }
            return code
        }
        guard code == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw DatabaseError(code: code, connection: connection, sql: sql)
        }
        guard let statement else {
            // Only whitespace or comments: SQLite compiles nothing.
            throw DatabaseError(code: SQLITE_MISUSE, message: "no SQL statement to prepare", sql: sql)
        }
        // A second statement after the first would be silently ignored: refuse it instead.
        guard trailing.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
            sqlite3_finalize(statement)
            throw DatabaseError(code: SQLITE_MISUSE, message: "more than one SQL statement", sql: sql)
        }
        self.handle = statement
        self.sql = sql
        columnNames = Self.firstNames(of: statement)
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: - Binding

    /// SQLite copies the bytes before the bind call returns (<https://www.sqlite.org/c3ref/c_static.html>).
    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    /// Binds a 64-bit integer to parameter `index` (from 1).
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`) when `index` is out of range.
    public func bind(_ value: Int64, at index: Int) throws(DatabaseError) {
        try check(sqlite3_bind_int64(handle, Int32(index), value))
    }

    /// Binds an integer to parameter `index` (from 1).
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`) when `index` is out of range.
    public func bind(_ value: Int, at index: Int) throws(DatabaseError) {
        try bind(Int64(value), at: index)
    }

    /// Binds a double to parameter `index` (from 1).
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`) when `index` is out of range.
    public func bind(_ value: Double, at index: Int) throws(DatabaseError) {
        try check(sqlite3_bind_double(handle, Int32(index), value))
    }

    /// Binds text to parameter `index` (from 1): every UTF-8 byte, NUL bytes included; an
    /// empty string stays an empty string (not `NULL`).
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`) when the index is out of
    ///   range or the text exceeds SQLite's length limit.
    public func bind(_ value: String, at index: Int) throws(DatabaseError) {
        var value = value
        let code = value.withUTF8 { bytes in
            guard let base = bytes.baseAddress else {
                // A nil pointer would bind NULL: give SQLite a real one for "".
                return sqlite3_bind_text(handle, Int32(index), "", 0, Self.transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                sqlite3_bind_text64(
                    handle, Int32(index), text, sqlite3_uint64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        }
        try check(code)
    }

    /// Binds a blob to parameter `index` (from 1); an empty array binds an empty blob.
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`).
    public func bind(_ value: [UInt8], at index: Int) throws(DatabaseError) {
        let code = value.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress {
                sqlite3_bind_blob64(handle, Int32(index), base, sqlite3_uint64(bytes.count), Self.transient)
            } else {
                sqlite3_bind_zeroblob(handle, Int32(index), 0)
            }
        }
        try check(code)
    }

    /// Binds `NULL` to parameter `index` (from 1).
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`) when `index` is out of range.
    public func bindNull(at index: Int) throws(DatabaseError) {
        try check(sqlite3_bind_null(handle, Int32(index)))
    }

    /// Binds one ``DatabaseValue`` to parameter `index` (from 1).
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`, `SQLITE_TOOBIG`).
    public func bind(_ value: DatabaseValue, at index: Int) throws(DatabaseError) {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let value): try bind(value, at: index)
        case .real(let value): try bind(value, at: index)
        case .text(let value): try bind(value, at: index)
        case .blob(let value): try bind(value, at: index)
        }
    }

    /// Binds `values` to parameters 1, 2, 3, ... in order.
    /// - Throws: ``DatabaseError`` (`SQLITE_RANGE`) when there are more values than parameters.
    public func bind(_ values: [DatabaseValue]) throws(DatabaseError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    // MARK: - Running

    /// Runs the statement to its next row (`sqlite3_step`, <https://www.sqlite.org/c3ref/step.html>).
    /// - Returns: `true` when a row is ready to read, `false` when the statement is done.
    /// - Throws: ``DatabaseError``: a constraint failed, the database is busy past the busy
    ///   timeout, the disk is full, ... Call ``reset()`` before running the statement again.
    @discardableResult
    public func step() throws(DatabaseError) -> Bool {
        lastColumn = -1
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw DatabaseError(code: code, connection: sqlite3_db_handle(handle), sql: sql)
        }
    }

    /// Makes the statement ready to run again from the start and sets every parameter back to
    /// `NULL` (`sqlite3_reset` + `sqlite3_clear_bindings`). A reset statement no longer holds
    /// its read snapshot open. Errors of the last step are not reported again here: ``step()``
    /// already threw them.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: - Reading columns

    /// The number of columns in a result row.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// Each result column's index by its name (`sqlite3_column_name`: the alias given with
    /// `AS`, else the column's own name), so a row is read by name at the cost of a reading by
    /// position. When two columns share a name, the first one counts.
    public private(set) lazy var columnIndexes: [String: Int] = {
        var indexes: [String: Int] = [:]
        for (index, name) in columnNames.enumerated() {
            if let name { indexes[name] = index }
        }
        return indexes
    }()

    /// Each result column's name by position, `nil` where an earlier column has the same name
    /// (as in ``columnIndexes``, the first one counts).
    private let columnNames: [String?]

    /// The furthest column of the current row found by name, -1 before the first.
    ///
    /// Rows are mostly read in the SELECT's order, and a column is often read twice in a row
    /// (its storage class, then its value): the name asked is then this column's or the next
    /// one's, and one or two comparisons replace a hash. A look back at an earlier column
    /// leaves it where it is.
    private var lastColumn = -1

    private static func firstNames(of handle: OpaquePointer) -> [String?] {
        var seen: Set<String> = []
        return (0..<Int(sqlite3_column_count(handle))).map { index in
            guard let name = sqlite3_column_name(handle, Int32(index)).map({ String(cString: $0) }) else { return nil }
            return seen.insert(name).inserted ? name : nil
        }
    }

    /// The index of result column `name` (as in ``columnIndexes``), or `nil` when the
    /// statement does not select it.
    public func columnIndex(_ name: String) -> Int? {
        let next = lastColumn + 1
        if lastColumn >= 0, columnNames[lastColumn] == name { return lastColumn }
        if next < columnNames.count, columnNames[next] == name {
            lastColumn = next
            return next
        }
        guard let index = columnIndexes[name] else { return nil }
        lastColumn = max(lastColumn, index)
        return index
    }

    /// The current row, read by column name.
    public var row: Row { Row(statement: self) }

    /// The storage class of column `index` (from 0) of the current row.
    public func storageClass(at index: Int) -> StorageClass {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// Whether column `index` (from 0) of the current row is `NULL`.
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    /// Column `index` (from 0) of the current row as a 64-bit integer (0 when `NULL`, SQLite's
    /// conversions otherwise: <https://www.sqlite.org/c3ref/column_blob.html>).
    public func int64(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(index))
    }

    /// Column `index` (from 0) of the current row as an integer (0 when `NULL`).
    public func int(at index: Int) -> Int {
        Int(int64(at: index))
    }

    /// Column `index` (from 0) of the current row as a double (0.0 when `NULL`).
    public func double(at index: Int) -> Double {
        sqlite3_column_double(handle, Int32(index))
    }

    /// Column `index` (from 0) of the current row as text, `nil` when `NULL`. Invalid UTF-8
    /// is repaired with U+FFFD rather than trapping.
    public func string(at index: Int) -> String? {
        if isNull(at: index) { return nil }
        // column_text before column_bytes: the documented safe order.
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `index` (from 0) of the current row as bytes, `nil` when `NULL`.
    public func blob(at index: Int) -> [UInt8]? {
        if isNull(at: index) { return nil }
        guard let bytes = sqlite3_column_blob(handle, Int32(index)) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    private func check(_ code: Int32) throws(DatabaseError) {
        guard code == SQLITE_OK else {
            throw DatabaseError(code: code, connection: sqlite3_db_handle(handle), sql: sql)
        }
    }
}
