import FoundationEssentials

/// JSON text written straight into a byte buffer, for values encoded often enough that
/// `JSONEncoder`'s Codable machinery (a container per value, boxing, then serialising a tree)
/// shows in the daemon's CPU profile.
///
/// The caller writes the structure itself (``raw(_:)`` for punctuation and keys) and this
/// type writes the values. Strings are escaped as `JSONEncoder` escapes them with
/// `.withoutEscapingSlashes`: `"` and `\` with a backslash; backspace, form feed, newline,
/// carriage return and tab in their short forms; other bytes below 0x20 as `\u00XX`;
/// everything else (DEL, U+2028, any non-ASCII) as its UTF-8 bytes, which RFC 8259 allows.
public struct JSONByteWriter: Sendable {
    /// The JSON text written so far, UTF-8.
    public private(set) var bytes: [UInt8]

    /// Creates an empty writer.
    /// - Parameter capacity: bytes to reserve up front (the expected length, to avoid regrowth).
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Reserves room for at least `count` more bytes.
    public mutating func reserve(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// Appends `text` verbatim: punctuation and keys, which the caller knows need no escaping.
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `null`.
    public mutating func null() {
        raw("null")
    }

    /// Appends `true` or `false`.
    public mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    /// Appends `value` as a JSON string, quoted and escaped.
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string($0) }
    }

    /// Appends UTF-8 text as a JSON string, quoted and escaped; `utf8` must be valid UTF-8.
    public mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            // The common case first: a byte copied as it is, in a run appended at once.
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") { continue }
            if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            runStart = index + 1
            switch byte {
            case UInt8(ascii: "\""): raw(#"\""#)
            case UInt8(ascii: "\\"): raw(#"\\"#)
            case 0x08: raw(#"\b"#)
            case 0x0C: raw(#"\f"#)
            case UInt8(ascii: "\n"): raw(#"\n"#)
            case UInt8(ascii: "\r"): raw(#"\r"#)
            case UInt8(ascii: "\t"): raw(#"\t"#)
            default:
                raw(#"\u00"#)
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends an optional string, `null` when absent.
    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Appends `value` in decimal.
    public mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        integer(value.magnitude)
    }

    /// Appends `value` in decimal.
    public mutating func integer(_ value: UInt64) {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let end = bytes.count + digits
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var remaining = value
        for index in stride(from: end - 1, through: end - digits, by: -1) {
            bytes[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
        }
    }

    /// Appends `value` in decimal.
    public mutating func integer(_ value: Int) {
        integer(Int64(value))
    }

    /// Appends `value` in decimal.
    public mutating func integer(_ value: Int32) {
        integer(Int64(value))
    }

    /// Appends `value` in decimal.
    public mutating func integer(_ value: UInt32) {
        integer(UInt64(value))
    }

    /// Appends an optional integer, `null` when absent.
    public mutating func integer(_ value: Int64?) {
        if let value { integer(value) } else { null() }
    }

    /// Appends an optional integer, `null` when absent.
    public mutating func integer(_ value: Int32?) {
        if let value { integer(value) } else { null() }
    }

    /// Appends a time as ``Timestamp/format(_:)`` writes it, quoted; `null` when absent.
    public mutating func timestamp(_ date: Date?) {
        guard let date else { return null() }
        bytes.append(UInt8(ascii: "\""))
        Timestamp.append(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends an object member's key, `"key":`, after a comma unless it is the object's
    /// first member.
    /// - Parameters:
    ///   - key: the key; it must need no escaping.
    ///   - first: whether no member of the object was written yet; set to `false`.
    public mutating func key(_ key: StaticString, first: inout Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        raw(key)
        raw("\":")
    }

    /// Appends the member `"key":value` when `value` is present, as `encodeIfPresent` writes
    /// it, after a comma unless it is the object's first; nothing for `nil`.
    /// - Parameters:
    ///   - key: the key; it must need no escaping.
    ///   - first: whether no member of the object was written yet; `false` once one is.
    public mutating func member(_ key: StaticString, _ value: String?, first: inout Bool) {
        guard let value else { return }
        self.key(key, first: &first)
        string(value)
    }

    /// As the `String?` member, for an integer.
    public mutating func member(_ key: StaticString, _ value: Int64?, first: inout Bool) {
        guard let value else { return }
        self.key(key, first: &first)
        integer(value)
    }

    /// As the `String?` member, for an integer.
    public mutating func member(_ key: StaticString, _ value: Int?, first: inout Bool) {
        member(key, value.map(Int64.init), first: &first)
    }

    /// As the `String?` member, for a Boolean.
    public mutating func member(_ key: StaticString, _ value: Bool?, first: inout Bool) {
        guard let value else { return }
        self.key(key, first: &first)
        bool(value)
    }

    /// As the `String?` member, for job IDs.
    public mutating func member(_ key: StaticString, _ value: [JobID]?, first: inout Bool) {
        guard let value else { return }
        self.key(key, first: &first)
        array(value)
    }

    /// As the `String?` member, for strings (an array).
    public mutating func member(_ key: StaticString, _ value: [String]?, first: inout Bool) {
        guard let value else { return }
        self.key(key, first: &first)
        array(value)
    }

    /// As the `String?` member, for a string-to-string object.
    public mutating func member(_ key: StaticString, _ value: [String: String]?, first: inout Bool) {
        guard let value else { return }
        self.key(key, first: &first)
        object(value)
    }

    /// Appends an array of job IDs.
    public mutating func array(_ ids: [JobID]) {
        bytes.append(UInt8(ascii: "["))
        for (index, id) in ids.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            integer(id.rawValue)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends a value that writes itself.
    public mutating func value(_ value: some JSONByteEncodable) {
        value.writeJSON(to: &self)
    }

    /// Appends an array of values that write themselves.
    public mutating func array<Element: JSONByteEncodable>(_ elements: some Sequence<Element>) {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            element.writeJSON(to: &self)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends an array of strings.
    public mutating func array(_ strings: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (index, element) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends a string-to-string object, keys in UTF-8 byte order, as `JSONEncoder` with
    /// `.sortedKeys` orders them.
    public mutating func object(_ dictionary: [String: String]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, entry) in Self.entriesInUTF8Order(dictionary).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(entry.key)
            bytes.append(UInt8(ascii: ":"))
            string(entry.value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// One entry of an object being written, with the first bytes of its key for sorting.
    struct SortedEntry {
        var key: String
        var value: String
        /// The key's first eight UTF-8 bytes, big-endian, zero-padded: when two differ they
        /// order the keys as their whole bytes do; when equal, the keys are compared whole.
        var keyPrefix: UInt64

        init(key: String, value: String) {
            self.key = key
            self.value = value
            var prefix: UInt64 = 0
            var count = 0
            for byte in key.utf8 {
                prefix = prefix << 8 | UInt64(byte)
                count += 1
                if count == 8 { break }
            }
            keyPrefix = count == 0 ? 0 : prefix << (8 * (8 - count))
        }
    }

    /// The entries of `dictionary`, their keys in UTF-8 byte order. Comparing two integers
    /// decides nearly every step of the sort (an environment's names seldom share eight
    /// leading bytes); comparing `String`s decided each one and was most of writing an
    /// environment, in orchctl and in orchd alike.
    static func entriesInUTF8Order(_ dictionary: [String: String]) -> [SortedEntry] {
        var entries: [SortedEntry] = []
        entries.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            entries.append(SortedEntry(key: key, value: value))
        }
        entries.sort { a, b in
            a.keyPrefix != b.keyPrefix ? a.keyPrefix < b.keyPrefix : utf8Precedes(a.key, b.key)
        }
        return entries
    }

    /// Whether `a`'s UTF-8 bytes order before `b`'s, compared over their contiguous storage:
    /// the generic `utf8.lexicographicallyPrecedes` was most of writing an environment.
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for index in 0..<min(x.count, y.count) where x[index] != y[index] {
                    return x[index] < y[index]
                }
                return x.count < y.count
            }
        }
    }
}
