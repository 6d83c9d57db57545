/// The name of a job queue: 1 to 64 characters from `A-Z a-z 0-9 . _ -`, not starting with
/// a dot or a dash. Every job belongs to one; ``default`` when the submitter names none.
public struct QueueName: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The underlying value.
    public let rawValue: String

    /// The queue a job goes to when none is named.
    public static let `default` = QueueName(validated: "default")

    /// Validates a queue name.
    /// - Returns: `nil` when `rawValue` is empty, longer than 64 characters, holds other
    ///   characters than letters, digits, `.`, `_` and `-`, or starts with `.` or `-`.
    public init?(rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(validated: String) {
        self.rawValue = validated
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard Self.isValid(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: Self.rule)
        }
        rawValue = text
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// What a valid name looks like, for error messages.
    public static let rule = "a queue name is 1-64 characters of A-Z a-z 0-9 . _ - and does not start with . or -"

    private static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count), bytes[0] != UInt8(ascii: "."), bytes[0] != UInt8(ascii: "-") else {
            return false
        }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    public static func < (lhs: QueueName, rhs: QueueName) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { rawValue }
}
