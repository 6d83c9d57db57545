import FoundationEssentials

/// A job's identity: a positive 64-bit integer assigned by the store, never reused.
///
/// On the wire and on the command line it is a bare integer (`7`, not `"7"`).
public struct JobID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The underlying value.
    public let rawValue: Int64

    /// Creates an ID from its integer value.
    /// - Parameter rawValue: the value; IDs the store assigns start at 1.
    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// Parses a command-line argument such as `"42"`.
    /// - Returns: `nil` unless the text is a whole number greater than zero.
    public init?(parsing text: some StringProtocol) {
        guard let value = Int64(text), value > 0 else { return nil }
        self.rawValue = value
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static func < (lhs: JobID, rhs: JobID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }
}
