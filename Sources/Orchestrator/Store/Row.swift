/// The current row of a ``Statement``, read by column name: `row["queue"]` instead of an
/// index that must be kept in step with the SELECT list by hand.
///
/// The name-to-index map is computed once per prepared statement
/// (``Statement/columnIndexes``), so reading by name costs at most one dictionary lookup per
/// column, and none when columns are read in the SELECT's order or one is read twice in a row
/// (``Statement/columnIndex(_:)``).
/// A name the statement does not select reads as `NULL`; ``index(_:)`` tells the two apart.
/// ```swift
/// while try statement.step() {
///     let row = statement.row
///     names.append(row.string("name") ?? "-")
/// }
/// ```
/// Valid until the statement steps again or is reset.
public struct Row {
    /// The statement positioned on the row.
    public let statement: Statement

    /// The index of column `name`, or `nil` when the statement does not select it.
    public func index(_ name: String) -> Int? {
        statement.columnIndex(name)
    }

    /// The storage class of column `name`; `.null` when not selected.
    public func storageClass(_ name: String) -> StorageClass {
        guard let index = index(name) else { return .null }
        return statement.storageClass(at: index)
    }

    /// Whether column `name` is `NULL` (or not selected).
    public func isNull(_ name: String) -> Bool {
        guard let index = index(name) else { return true }
        return statement.isNull(at: index)
    }

    /// Column `name` as a 64-bit integer, `nil` when `NULL` or not selected.
    public func int64(_ name: String) -> Int64? {
        guard let index = index(name), !statement.isNull(at: index) else { return nil }
        return statement.int64(at: index)
    }

    /// Column `name` as text, `nil` when `NULL` or not selected.
    public func string(_ name: String) -> String? {
        guard let index = index(name) else { return nil }
        return statement.string(at: index)
    }
}
