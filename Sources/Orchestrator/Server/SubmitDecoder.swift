import Foundation
import OrchestratorAPI

/// Decodes the parameters of `io.orchd.Jobs.Submit` and `io.orchd.Jobs.SubmitBatch` calls
/// with a small parser written for their shape, instead of `JSONDecoder` (most of a large
/// batch's cost, and a sixth of orchd's work for one submit, was the coder's generic
/// machinery, per field of every spec).
///
/// It accepts only input it reads exactly as the Codable decoder would: well-formed JSON,
/// integers without fraction or exponent that fit their field, no key given twice, valid
/// UTF-8, queue names and start times that their types accept. For anything else it gives
/// up, and ``batchParameters(of:)`` and ``submitParameters(of:)`` let the Codable decoder
/// decide; so bad input gets the same error, naming the same field, as before.
enum SubmitDecoder {
    /// A SubmitBatch call's parameters: from the parser when it accepts the message, else
    /// from ``VarlinkMethodCall/parameters(_:)`` (the Codable decoder, and its errors).
    /// - Throws: `org.varlink.service.InvalidParameter` naming the offending field.
    static func batchParameters(of call: VarlinkMethodCall) throws(VarlinkError) -> JobsInterface.SubmitBatchParameters {
        if let parameters = decodeBatch(call.message) { return parameters }
        return try call.parameters(JobsInterface.SubmitBatchParameters.self)
    }

    /// A Submit call's parameters, as ``batchParameters(of:)`` reads a batch's.
    /// - Throws: `org.varlink.service.InvalidParameter` naming the offending field.
    static func submitParameters(of call: VarlinkMethodCall) throws(VarlinkError) -> JobsInterface.SubmitParameters {
        if let parameters = decodeSubmit(call.message) { return parameters }
        return try call.parameters(JobsInterface.SubmitParameters.self)
    }

    /// The parameters of a whole SubmitBatch call message, or `nil` when the parser does not
    /// accept it.
    static func decodeBatch(_ message: Data) -> JobsInterface.SubmitBatchParameters? {
        decodeCall(message) { $0.batchParameters() }
    }

    /// The parameters of a whole Submit call message, or `nil` when the parser does not
    /// accept it.
    static func decodeSubmit(_ message: Data) -> JobsInterface.SubmitParameters? {
        decodeCall(message) { $0.submitParameters() }
    }

    private static func decodeCall<P>(_ message: Data, _ readParameters: (inout Parser) -> P?) -> P? {
        message.withUnsafeBytes { raw -> P? in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            guard let parameters = parser.call(readParameters), parser.atEnd() else { return nil }
            return parameters
        }
    }

    /// A call's header, as `VarlinkCallHeader` decodes it (`more` and `oneway` false when
    /// absent or null), or `nil` when the parser does not accept the message (then the Codable
    /// decoder judges it). Every call is read so before its method is known.
    static func header(of message: Data) -> (method: String, more: Bool, oneway: Bool)? {
        message.withUnsafeBytes { raw -> (method: String, more: Bool, oneway: Bool)? in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            var method: String?
            var more: Bool?, oneway: Bool?
            var seen: Set<String> = []
            let ok = parser.object { key, parser in
                guard seen.insert(key).inserted else { return false }
                switch key {
                case "method": method = parser.string(); return method != nil
                case "more": return parser.null() || { more = parser.bool(); return more != nil }()
                case "oneway": return parser.null() || { oneway = parser.bool(); return oneway != nil }()
                default: return parser.skipValue()
                }
            }
            guard ok, parser.atEnd(), let method else { return nil }
            return (method, more ?? false, oneway ?? false)
        }
    }

    /// A recursive-descent JSON reader over the message's bytes; each method returns `nil`
    /// (give up) at the first thing it does not accept.
    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Objects and arrays open around the current position: deep nesting gives up
        /// before it could exhaust the stack.
        var depth = 0
        static let maximumDepth = 64

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        // MARK: The call's shape

        /// `{"method": ..., "parameters": {...}, "more": ..., "oneway": ...}`, the parameters
        /// read by `readParameters`.
        mutating func call<P>(_ readParameters: (inout Parser) -> P?) -> P? {
            var parameters: P?
            var seen: Set<String> = []
            let ok = object { key, parser in
                guard seen.insert(key).inserted else { return false }
                switch key {
                case "method": return parser.string() != nil
                case "parameters":
                    if parser.null() { return true }
                    parameters = readParameters(&parser)
                    return parameters != nil
                case "more", "oneway": return parser.null() || parser.bool() != nil
                default: return parser.skipValue()
                }
            }
            // Without a method the coder refuses the call.
            return ok && seen.contains("method") ? parameters : nil
        }

        mutating func batchParameters() -> JobsInterface.SubmitBatchParameters? {
            var specs: [JobSpec]?
            var environment: [String: String]?
            var returnJobs: Bool?
            var seen: Set<String> = []
            let ok = object { key, parser in
                guard seen.insert(key).inserted else { return false }
                switch key {
                case "specs":
                    var list: [JobSpec] = []
                    let ok = parser.array { parser in
                        guard let spec = parser.spec() else { return false }
                        list.append(spec)
                        return true
                    }
                    specs = list
                    return ok
                case "environment":
                    if parser.null() { return true }
                    environment = parser.stringMap()
                    return environment != nil
                case "returnJobs":
                    if parser.null() { return true }
                    returnJobs = parser.bool()
                    return returnJobs != nil
                default: return parser.skipValue()
                }
            }
            guard ok, let specs else { return nil }
            return JobsInterface.SubmitBatchParameters(specs: specs, environment: environment, returnJobs: returnJobs)
        }

        /// `{"spec": {...}, "reuseExisting": ...}`.
        mutating func submitParameters() -> JobsInterface.SubmitParameters? {
            var spec: JobSpec?
            var reuseExisting: Bool?
            var seen: Set<String> = []
            let ok = object { key, parser in
                guard seen.insert(key).inserted else { return false }
                switch key {
                case "spec":
                    spec = parser.spec()
                    return spec != nil
                case "reuseExisting":
                    if parser.null() { return true }
                    reuseExisting = parser.bool()
                    return reuseExisting != nil
                default: return parser.skipValue()
                }
            }
            guard ok, let spec else { return nil }
            return JobsInterface.SubmitParameters(spec: spec, reuseExisting: reuseExisting)
        }

        /// One ``JobSpec``, as its `init(from:)` reads it (`null` is the same as absent for
        /// every optional field).
        mutating func spec() -> JobSpec? {
            var argv: [String]?, shell: String?, cwd: String?, environment: [String: String]?
            var queue: QueueName?, priority: Int?, name: String?, labels: [String: String]?
            var after: [JobID]?, notBefore: Date?, timeoutUSec: Int64?, maxAttempts: Int?, uniqueKey: String?
            var seen: Set<String> = []
            let ok = object { key, parser in
                guard seen.insert(key).inserted else { return false }
                // Every known field may be null, meaning absent, except cwd.
                if key != "cwd" && parser.null() { return true }
                switch key {
                case "argv":
                    var words: [String] = []
                    let ok = parser.array { parser in
                        guard let word = parser.string() else { return false }
                        words.append(word)
                        return true
                    }
                    argv = words
                    return ok
                case "shell": shell = parser.string(); return shell != nil
                case "cwd": cwd = parser.string(); return cwd != nil
                case "environment": environment = parser.stringMap(); return environment != nil
                case "queue":
                    guard let text = parser.string(), let valid = QueueName(rawValue: text) else { return false }
                    queue = valid
                    return true
                case "priority":
                    guard let value = parser.integer(), let narrow = Int(exactly: value) else { return false }
                    priority = narrow
                    return true
                case "name": name = parser.string(); return name != nil
                case "labels": labels = parser.stringMap(); return labels != nil
                case "after":
                    var ids: [JobID] = []
                    let ok = parser.array { parser in
                        guard let id = parser.integer() else { return false }
                        ids.append(JobID(rawValue: id))
                        return true
                    }
                    after = ids
                    return ok
                case "notBefore":
                    guard let text = parser.string(), let date = Timestamp.parse(text) else { return false }
                    notBefore = date
                    return true
                case "timeoutUSec": timeoutUSec = parser.integer(); return timeoutUSec != nil
                case "maxAttempts":
                    guard let value = parser.integer(), let narrow = Int(exactly: value) else { return false }
                    maxAttempts = narrow
                    return true
                case "uniqueKey": uniqueKey = parser.string(); return uniqueKey != nil
                default: return parser.skipValue()
                }
            }
            guard ok, let cwd else { return nil }
            let command: JobCommand
            switch (argv, shell) {
            case (let argv?, nil): command = .argv(argv)
            case (nil, let shell?): command = .shell(shell)
            default: return nil
            }
            return JobSpec(
                command: command, cwd: cwd, environment: environment ?? [:], queue: queue ?? .default,
                priority: priority ?? 0, name: name, labels: labels ?? [:], after: after ?? [], notBefore: notBefore,
                timeoutUSec: timeoutUSec, maxAttempts: maxAttempts ?? 1, uniqueKey: uniqueKey)
        }

        /// An object of strings, no key twice.
        mutating func stringMap() -> [String: String]? {
            var map: [String: String] = [:]
            let ok = object { key, parser in
                guard let value = parser.string(), map.updateValue(value, forKey: key) == nil else { return false }
                return true
            }
            return ok ? map : nil
        }

        // MARK: JSON

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// Only whitespace is left.
        mutating func atEnd() -> Bool {
            skipSpace()
            return index == bytes.count
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func literal(_ text: StaticString) -> Bool {
            skipSpace()
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func null() -> Bool { literal("null") }

        mutating func bool() -> Bool? {
            if literal("true") { return true }
            if literal("false") { return false }
            return nil
        }

        /// `{ "key": value, ... }`, each member read by `member`.
        mutating func object(_ member: (String, inout Parser) -> Bool) -> Bool {
            guard depth < Self.maximumDepth, take(UInt8(ascii: "{")) else { return false }
            depth += 1
            defer { depth -= 1 }
            if take(UInt8(ascii: "}")) { return true }
            while true {
                guard let key = string(), take(UInt8(ascii: ":")), member(key, &self) else { return false }
                if take(UInt8(ascii: "}")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
            }
        }

        /// `[ value, ... ]`, each element read by `element`.
        mutating func array(_ element: (inout Parser) -> Bool) -> Bool {
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

        /// Any value, checked for form and dropped (a field this version does not know).
        mutating func skipValue() -> Bool {
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
        mutating func number() -> Bool {
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
        mutating func integer() -> Int64? {
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

        /// A JSON string: escapes decoded, valid UTF-8 only.
        mutating func string() -> String? {
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
}
