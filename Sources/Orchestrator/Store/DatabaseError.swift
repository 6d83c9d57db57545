import CSQLite

/// An error reported by SQLite: the extended result code, SQLite's message, and the SQL that
/// failed (never the bound values, which can hold a job's environment).
///
/// Switch on ``code`` (an extended result code, <https://www.sqlite.org/rescode.html>) or use
/// the shortcuts ``isBusy``, ``isFull`` and ``isCorrupt``.
public struct DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The SQLite extended result code, e.g. `SQLITE_FULL` (13) or `SQLITE_BUSY_SNAPSHOT` (517).
    /// The primary code is the low 8 bits (<https://www.sqlite.org/rescode.html#primary_result_codes_versus_extended_result_codes>).
    public var code: Int32
    /// SQLite's message (`sqlite3_errmsg`), or ours when the error is not SQLite's own.
    public var message: String
    /// The SQL being executed, without bound values; `nil` when no statement was involved
    /// (opening the file, for instance).
    public var sql: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: an SQLite (extended) result code.
    ///   - message: what went wrong.
    ///   - sql: the statement's text, if any.
    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// Builds the error SQLite last reported on `connection`.
    init(code: Int32, connection: OpaquePointer?, sql: String?) {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        self.init(code: code, message: message ?? Self.codeDescription(code), sql: sql)
    }

    /// The primary result code: the low 8 bits of ``code``.
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether another connection holds a conflicting lock (`SQLITE_BUSY` or `SQLITE_LOCKED`,
    /// any extended variant): retrying later may succeed. See <https://www.sqlite.org/rescode.html#busy>.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    /// Whether the disk or the database is full (`SQLITE_FULL`). See <https://www.sqlite.org/rescode.html#full>.
    public var isFull: Bool { primaryCode == SQLITE_FULL }

    /// Whether the file is damaged or is not a database at all (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
    /// See <https://www.sqlite.org/rescode.html#corrupt>.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    /// `SQLite error 13 (database or disk is full): <message> while executing `<sql>``.
    public var description: String {
        var text = "SQLite error \(code) (\(Self.codeDescription(code))): \(message)"
        if let sql { text += " while executing `\(sql)`" }
        return text
    }

    /// SQLite's English text for a result code (`sqlite3_errstr`).
    static func codeDescription(_ code: Int32) -> String {
        sqlite3_errstr(code).map { String(cString: $0) } ?? "unknown error"
    }
}
