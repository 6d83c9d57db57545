/// Writes JSON text (RFC 8259) straight into bytes, for messages sent on a hot path without
/// `JSONEncoder`: the coder's generic machinery was a third of the instructions of an
/// `orchctl submit` process.
///
/// Members are written in call order; the writer places the commas. Strings are escaped as
/// RFC 8259 section 7 requires (quotation mark, reverse solidus, and control characters
/// below U+0020); everything else is written as its UTF-8.
public struct JSONWriter: Sendable {
    /// The text written so far.
    public private(set) var bytes: [UInt8] = []
    /// For each open object or array, whether nothing has been written in it yet.
    private var empty: [Bool] = []

    /// Creates an empty writer.
    /// - Parameter capacity: bytes to reserve, to avoid regrowing for a message of known size.
    public init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    /// Opens an object, as a value or at the top level.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        empty.append(true)
    }

    /// Closes the innermost object.
    public mutating func endObject() {
        empty.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes a member's name; the next value written is its value.
    public mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        // The value follows the colon without a comma.
        isValueOfKey = true
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separate()
        appendString(value)
    }

    /// Writes an integer value.
    public mutating func integer<T: BinaryInteger>(_ value: T) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Writes an array of strings.
    public mutating func strings(_ values: [String]) {
        separate()
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes an array of integers.
    public mutating func integers<T: BinaryInteger>(_ values: [T]) {
        separate()
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: String(value).utf8)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes an object of string members.
    /// - Parameters:
    ///   - values: the members.
    ///   - sortedKeys: in the names' order (`<`: byte order for ASCII; the same text for
    ///     the same values, for content addressing), instead of the dictionary's order.
    public mutating func stringMap(_ values: [String: String], sortedKeys: Bool = false) {
        beginObject()
        if sortedKeys {
            for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                key(name)
                string(value)
            }
        } else {
            for (name, value) in values {
                key(name)
                string(value)
            }
        }
        endObject()
    }

    // MARK: - Private

    /// Whether the value about to be written is a member's (after its colon).
    private var isValueOfKey = false

    /// Writes the comma before a value or member that is not the first of its container.
    private mutating func separate() {
        if isValueOfKey {
            isValueOfKey = false
            return
        }
        guard let last = empty.last else { return }
        if last {
            empty[empty.count - 1] = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole.
        let plain = value.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if plain == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A value that writes its own JSON, the same value its `Encodable` conformance encodes.
public protocol JSONWritable {
    /// Writes the value as one JSON value.
    func writeJSON(to writer: inout JSONWriter)
}
