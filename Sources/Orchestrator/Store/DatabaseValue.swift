/// A value SQLite stores: one of its five storage classes
/// (<https://www.sqlite.org/datatype3.html#storage_classes_and_datatypes>).
///
/// Literals work where a value is expected:
/// ```swift
/// try statement.bind([1, "default", nil, .init(job.spec.name)])
/// ```
public enum DatabaseValue: Hashable, Sendable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByNilLiteral
{
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes, stored as given.
    case blob([UInt8])

    /// An integer, or `NULL` when `value` is `nil`.
    public init(_ value: Int64?) { self = value.map(Self.integer) ?? .null }
    /// An integer, or `NULL` when `value` is `nil`.
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    /// A real, or `NULL` when `value` is `nil`.
    public init(_ value: Double?) { self = value.map(Self.real) ?? .null }
    /// Text, or `NULL` when `value` is `nil`.
    public init(_ value: String?) { self = value.map(Self.text) ?? .null }
    /// A blob, or `NULL` when `value` is `nil`.
    public init(_ value: [UInt8]?) { self = value.map(Self.blob) ?? .null }

    /// Creates a value with every field given.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Creates a value with every field given.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// Creates a value with every field given.
    public init(stringLiteral value: String) { self = .text(value) }
    /// Creates a value with every field given.
    public init(nilLiteral: ()) { self = .null }
}
