/// The type of a value as SQLite stored it
/// (<https://www.sqlite.org/datatype3.html#storage_classes_and_datatypes>).
public enum StorageClass: Sendable, Hashable {
    case null, integer, real, text, blob
}
