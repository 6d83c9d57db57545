import FoundationEssentials

/// A recursive-descent JSON reader (RFC 8259) over a message's bytes, for the messages read
/// on a hot path without `JSONDecoder`: each method returns `nil` or `false` (give up) at the
/// first thing it does not accept, and its caller then lets `JSONDecoder` judge the message,
/// so errors stay the coder's. It accepts only what `JSONDecoder` reads the same way: no key
/// given twice, valid UTF-8, integers without fraction or exponent that fit.
public struct JSONByteReader {
    /// The message.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The position of the next byte to read.
    public var index = 0
    /// Objects and arrays open around the current position: deep nesting gives up
    /// before it could exhaust the stack.
    var depth = 0
    static let maximumDepth = 64

    /// A reader at the start of `bytes`, which must outlive it.
    public init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// An object of strings, no key twice.
    ///
    /// Read in one loop rather than through ``object(_:)``: each member is hashed once, by the
    /// insertion that also finds a key given twice (an environment is read on every submit).
    public mutating func stringMap() -> [String: String]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var map: [String: String] = [:]
        if take(UInt8(ascii: "}")) { return map }
        while true {
            guard let key = name(), take(UInt8(ascii: ":")), let value = string(),
                  map.updateValue(value, forKey: key) == nil else { return nil }
            if take(UInt8(ascii: "}")) { return map }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    // MARK: JSON

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    public mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Only whitespace is left.
    public mutating func atEnd() -> Bool {
        skipSpace()
        return index == bytes.count
    }

    /// Reads `byte` after any whitespace; `false` (and nothing read) when another comes.
    public mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Reads `text` after any whitespace; `false` when it is not there.
    public mutating func literal(_ text: StaticString) -> Bool {
        skipSpace()
        let count = text.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// Reads `null`.
    public mutating func null() -> Bool { literal("null") }

    /// Reads `true` or `false`.
    public mutating func bool() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    /// `{ "key": value, ... }`, each member read by `member`; `false` (give up) for a key given
    /// twice, as for anything `member` does not take.
    public mutating func object(_ member: (String, inout JSONByteReader) -> Bool) -> Bool {
        guard depth < Self.maximumDepth, take(UInt8(ascii: "{")) else { return false }
        depth += 1
        defer { depth -= 1 }
        if take(UInt8(ascii: "}")) { return true }
        // A key given twice is given up on: which one JSONDecoder would keep is its own affair.
        var keys: Set<String> = []
        while true {
            guard let key = name(), keys.insert(key).inserted, take(UInt8(ascii: ":")), member(key, &self) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            guard take(UInt8(ascii: ",")) else { return false }
        }
    }

    /// `[ value, ... ]`, each element read by `element`.
    public mutating func array(_ element: (inout JSONByteReader) -> Bool) -> Bool {
        guard depth < Self.maximumDepth, take(UInt8(ascii: "[")) else { return false }
        depth += 1
        defer { depth -= 1 }
        if take(UInt8(ascii: "]")) { return true }
        while true {
            guard element(&self) else { return false }
            if take(UInt8(ascii: "]")) { return true }
            guard take(UInt8(ascii: ",")) else { return false }
        }
    }

    /// `[ value, ... ]` as a list, each element read by `element`.
    /// - Returns: the elements in order, or `nil` when the array is malformed or `element`
    ///   refuses one (returns `nil`).
    public mutating func list<Element>(_ element: (inout JSONByteReader) -> Element?) -> [Element]? {
        var elements: [Element] = []
        let ok = array { reader in
            guard let value = element(&reader) else { return false }
            elements.append(value)
            return true
        }
        return ok ? elements : nil
    }

    /// What ``strictScan(of:)`` found in a message.
    public enum StrictScan: Equatable, Sendable {
        /// Strict JSON (RFC 8259), no object repeating a member name.
        case clean
        /// A member name given twice in one object, by its path: `["parameters", "spec",
        /// "environment", "A"]` (an array element by its index). A name the top-level object
        /// repeats (`["method"]`) is reported before any deeper one.
        case repeatedName([String])
        /// Not strict JSON (a trailing comma, invalid UTF-8, a lone surrogate escape, a raw
        /// control character in a string, a malformed number, or nesting deeper than
        /// ``strictScanMaximumDepth``), by the path where the scan stopped.
        case notStrict([String])
        /// A member name that is not stream-safe text (``isStreamSafe(_:)``), by the path of
        /// the object that has it.
        case unsafeName([String])
    }

    /// Objects and arrays a strict scan follows in: `JSONDecoder`'s own limit is 512.
    public static let strictScanMaximumDepth = 512

    /// Reads a whole message as strict JSON and looks for member names given twice in one
    /// object. `JSONDecoder` keeps one of two values silently, it also takes some JSON that is
    /// not strict (trailing commas, lone surrogates), and two names Unicode holds equal (`é`
    /// precomposed and decomposed) are one key to a `[String: String]`: a message that
    /// `JSONDecoder` is to read is checked here first, and refused unless ``StrictScan/clean``,
    /// so that no value orchd reads is ever dropped or guessed at without a word.
    /// - Parameter message: the message's bytes.
    /// - Returns: the first place it is not strict JSON, or the first name that is not
    ///   stream-safe; else a name the top-level object repeats; else the first repeated name
    ///   deeper; else ``StrictScan/clean``.
    public static func strictScan<Bytes: ContiguousBytes>(of message: Bytes) -> StrictScan {
        var numbers: [UnusualNumber] = []
        return strictScan(of: message, unusualNumbers: &numbers)
    }

    /// ``strictScan(of:)``, also listing the numbers that an integer field may refuse.
    /// - Parameters:
    ///   - message: the message's bytes.
    ///   - unusualNumbers: set to the message's ``UnusualNumber``s in the order they come
    ///     (as far as the scan got).
    /// - Returns: as ``strictScan(of:)``.
    public static func strictScan<Bytes: ContiguousBytes>(of message: Bytes, unusualNumbers: inout [UnusualNumber]) -> StrictScan {
        message.withUnsafeBytes { raw in
            var reader = JSONByteReader(bytes: raw.bindMemory(to: UInt8.self))
            var scan = StrictScanState()
            defer { unusualNumbers = scan.unusualNumbers }
            guard reader.scanValue(&scan) else { return scan.unsafeName ? .unsafeName(scan.path) : .notStrict(scan.path) }
            guard reader.atEnd() else { return .notStrict([]) }
            if let repeated = scan.topLevelRepeat ?? scan.firstRepeat { return .repeatedName(repeated) }
            return .clean
        }
    }

    /// A number that some integer field refuses: one not written as an integer
    /// (`-?(0|[1-9][0-9]*)`: `1.5`, `1e3`, `1.0`), or an integer outside `0...Int32.max`, the
    /// range that every integer type of orchd's parameters holds. Numbers are listed only by
    /// this rule, not by the fields that hold them, so that a scan needs no types; an ordinary
    /// call (small IDs, counts and limits) has none.
    public struct UnusualNumber: Equatable, Sendable {
        /// Where it is: `["parameters", "uids", "0"]` (an array element by its index).
        public var path: [String]
        /// Its bytes' offsets in the message.
        public var range: Range<Int>
        /// Written as an integer, without fraction or exponent.
        public var isIntegerForm: Bool

        /// Creates a value with every field given.
        public init(path: [String], range: Range<Int>, isIntegerForm: Bool) {
            self.path = path
            self.range = range
            self.isIntegerForm = isIntegerForm
        }
    }

    /// Where a strict scan is, the repeated names and the unusual numbers it has met.
    private struct StrictScanState {
        var path: [String] = []
        var unusualNumbers: [UnusualNumber] = []
        /// The scan stopped at a name that is not stream-safe (``path`` is its object's).
        var unsafeName = false
        var topLevelRepeat: [String]?
        var firstRepeat: [String]?
    }

    /// One value of a strict scan: `false` where it stops being strict JSON (`scan.path` then
    /// names the place). A repeated name is noted and the scan goes on, so that a repeat in
    /// the top-level object is found wherever it comes.
    private mutating func scanValue(_ scan: inout StrictScanState) -> Bool {
        skipSpace()
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < Self.strictScanMaximumDepth else { return false }
            index += 1
            depth += 1
            defer { depth -= 1 }
            if take(UInt8(ascii: "}")) { return true }
            var names: Set<String> = []
            while true {
                let start = index
                guard let name = string() else { return false }
                guard Self.isStreamSafe(name) else {
                    index = start
                    scan.unsafeName = true
                    return false
                }
                scan.path.append(name)
                if !names.insert(name).inserted {
                    if scan.path.count == 1 && scan.topLevelRepeat == nil { scan.topLevelRepeat = scan.path }
                    if scan.firstRepeat == nil { scan.firstRepeat = scan.path }
                }
                guard take(UInt8(ascii: ":")), scanValue(&scan) else { return false }
                scan.path.removeLast()
                if take(UInt8(ascii: "}")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
            }
        case UInt8(ascii: "["):
            guard depth < Self.strictScanMaximumDepth else { return false }
            index += 1
            depth += 1
            defer { depth -= 1 }
            if take(UInt8(ascii: "]")) { return true }
            var position = 0
            while true {
                scan.path.append(String(position))
                guard scanValue(&scan) else { return false }
                scan.path.removeLast()
                position += 1
                if take(UInt8(ascii: "]")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
            }
        case UInt8(ascii: "\""):
            return string() != nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            // The same strict reader a skipped field goes through.
            let start = index
            guard number() else { return false }
            if let unusual = unusualNumber(at: start..<index, path: scan.path) { scan.unusualNumbers.append(unusual) }
            return true
        default:
            // Literals: the same strict readers a skipped field goes through.
            return skipValue()
        }
    }

    /// The number whose bytes are `range` as an ``UnusualNumber``, or `nil` when it is an
    /// integer in `0...Int32.max`.
    private func unusualNumber(at range: Range<Int>, path: [String]) -> UnusualNumber? {
        let text = UnsafeBufferPointer(rebasing: bytes[range])
        let isIntegerForm = !text.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        // Ten digits or fewer (no leading zeros in strict JSON), compared as text: no parse.
        let usual = isIntegerForm && text[0] != UInt8(ascii: "-")
            && (text.count < 10 || text.count == 10 && text.lexicographicallyPrecedes("2147483648".utf8))
        return usual ? nil : UnusualNumber(path: path, range: range, isIntegerForm: isIntegerForm)
    }

    /// Any value, checked as strict JSON in which no object repeats a name, and dropped: a
    /// field this version does not know, in a call read on the fast path. `false` sends the
    /// call to the Codable decoder, whose strict scan refuses it, as a repeat anywhere else
    /// is refused, and so the answer does not depend on which decoder read the call.
    public mutating func skipValueCheckingNames() -> Bool {
        var scan = StrictScanState()
        return scanValue(&scan) && scan.firstRepeat == nil
    }

    /// Any value, checked for form and dropped (a field this version does not know).
    public mutating func skipValue() -> Bool {
        skipSpace()
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"): return skipObject()
        case UInt8(ascii: "["): return array { $0.skipValue() }
        case UInt8(ascii: "\""): return skipString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return bool() != nil
        case UInt8(ascii: "n"): return null()
        default: return number()
        }
    }

    /// An object checked for form and dropped, its member names not made into strings.
    private mutating func skipObject() -> Bool {
        guard depth < Self.maximumDepth, take(UInt8(ascii: "{")) else { return false }
        depth += 1
        defer { depth -= 1 }
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipSpace()
            guard skipString(), take(UInt8(ascii: ":")), skipValue() else { return false }
            if take(UInt8(ascii: "}")) { return true }
            guard take(UInt8(ascii: ",")) else { return false }
        }
    }

    /// A string checked as ``string()`` checks it, without making it: a skipped
    /// parameters object (every call's header is read first) is most of a call's strings.
    private mutating func skipString() -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
        var probe = index + 1
        while probe < bytes.count {
            let byte = bytes[probe]
            if byte == UInt8(ascii: "\"") {
                index = probe + 1
                return true
            }
            // Escapes and anything outside ASCII: the full reader decides.
            if byte == UInt8(ascii: "\\") || byte >= 0x80 { return string() != nil }
            guard byte >= 0x20 else { return false }
            probe += 1
        }
        return false
    }

    /// A JSON number of any form (for skipped fields).
    public mutating func number() -> Bool {
        skipSpace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
        let start = index
        guard digits() > 0 else { return false }
        if bytes[start] == UInt8(ascii: "0") && index - start > 1 { return false }  // a leading zero
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard digits() > 0 else { return false }
        }
        return true
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    /// `-?(0|[1-9][0-9]*)` that fits an `Int64`, not followed by a fraction or exponent.
    public mutating func integer() -> Int64? {
        skipSpace()
        var negative = false
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var magnitude: UInt64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            guard !o1 && !o2 else { return nil }
            magnitude = sum
            index += 1
        }
        let count = index - start
        guard count > 0, !(count > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1, magnitude != 0 else { return nil }  // "-0": let the coder decide
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// A JSON string read as a member name: ``string()``, refused (`nil`) when it is not
    /// stream-safe text (``isStreamSafe(_:)``). Names are hashed and compared, and a
    /// `String`'s hash and `==` normalise it, which takes time quadratic in a run of combining
    /// marks: a 20,000-mark name held a core for seconds.
    public mutating func name() -> String? {
        guard let text = string() else { return nil }
        return Self.isStreamSafe(text) ? text : nil
    }

    /// The most combining marks (non-starters) stream-safe text has in a row (UAX #15).
    public static let maximumNonStarters = 30

    /// Whether `text` has no run of more than ``maximumNonStarters`` combining marks, the
    /// stream-safe text format of UAX #15, so that normalising it takes linear time. ASCII is
    /// stream-safe and is told by its bytes alone.
    public static func isStreamSafe(_ text: String) -> Bool {
        guard text.utf8.contains(where: { $0 >= 0x80 }) else { return true }
        var run = 0
        for scalar in text.unicodeScalars {
            if scalar.properties.canonicalCombiningClass == .notReordered {
                run = 0
            } else {
                run += 1
                if run > maximumNonStarters { return false }
            }
        }
        return true
    }

    /// A JSON string: escapes decoded, valid UTF-8 only.
    public mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        // The common case: no escape, read in place; ASCII needs no UTF-8 validation.
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { return nil }
            ascii = ascii && byte < 0x80
            index += 1
        }
        var scratch = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard literalRaw("\\u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        return nil
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    scratch.append(contentsOf: String(Character(unicode)).utf8)
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                scratch.append(byte)
            }
        }
        return nil
    }

    /// The exact bytes of `text` next, without skipping whitespace (inside a string).
    private mutating func literalRaw(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
        index += count
        return true
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}

extension JSONByteReader {
    /// Any value as ``JSONValue`` decodes it; a number only when it is an integer that fits
    /// an `Int64` (``JSONValue/integer(_:)``), else `nil` (give up).
    public mutating func jsonValue() -> JSONValue? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return jsonObject().map(JSONValue.object)
        case UInt8(ascii: "["): return list { $0.jsonValue() }.map(JSONValue.array)
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return bool().map(JSONValue.bool)
        case UInt8(ascii: "n"): return null() ? JSONValue.null : nil
        default: return integer().map(JSONValue.integer)
        }
    }

    /// An object of any values, as `[String: JSONValue]` decodes it; `nil` (give up) for a
    /// key given twice, as for any value ``jsonValue()`` does not take.
    public mutating func jsonObject() -> [String: JSONValue]? {
        var members: [String: JSONValue] = [:]
        let ok = object { key, reader in
            guard let value = reader.jsonValue() else { return false }
            members[key] = value
            return true
        }
        return ok ? members : nil
    }

    /// An object read for its member `name` alone, every other member skipped, as a
    /// `Decodable` with that one stored property decodes it (the replies that orchctl reads
    /// for one part, such as a reply's `jobs`).
    /// - Returns: the member's value as `read` takes it; `nil` (give up) when the member is
    ///   missing or `null`, `read` does not take it, or the text is not such an object (a key
    ///   given twice included).
    mutating func member<Value>(_ name: String, _ read: (inout JSONByteReader) -> Value?) -> Value? {
        var value: Value?
        let ok = object { key, reader in
            guard key == name else { return reader.skipValue() }
            return reader.required(&value, read)
        }
        return ok ? value : nil
    }

    /// A member that must be present and not `null`: read by `read` into `value`; `false`
    /// (give up) when it does not take the value.
    mutating func required<Value>(_ value: inout Value?, _ read: (inout JSONByteReader) -> Value?) -> Bool {
        value = read(&self)
        return value != nil
    }

    /// A member that may be `null` (`decodeIfPresent`): `value` stays `nil` for `null`, else
    /// is read by `read`; `false` (give up) when it does not take the value.
    mutating func nullable<Value>(_ value: inout Value?, _ read: (inout JSONByteReader) -> Value?) -> Bool {
        if null() { return true }
        value = read(&self)
        return value != nil
    }
}
