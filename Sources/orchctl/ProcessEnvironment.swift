import Glibc
import OrchestratorAPI

/// The environment as orchd can store it (UTF-8 text, names distinct as Swift strings), and
/// what reading it that way changed.
struct ProcessEnvironment: Sendable {
    /// The variables by name.
    var variables: [String: String]
    /// A line per variable the job will not get exactly: bytes that are not UTF-8 (sent with
    /// U+FFFD in their place), or a name equal to an earlier one as a Swift string but not
    /// byte for byte (left out).
    var changes: [String]

    /// orchctl's own environment, read from `environ` once, at the first use (orchctl never
    /// changes it; the socket's path and a submit's spec both read it).
    static let current = ProcessEnvironment(reading: environ)

    /// An environment given as it is, with nothing changed.
    init(variables: [String: String], changes: [String] = []) {
        self.variables = variables
        self.changes = changes
    }

    /// Reads `entries`, a NULL-terminated `environ` array (the first of duplicate names, as
    /// getenv(3) finds it). Not through `ProcessInfo`, whose set-up costs more than the read.
    /// Sized before the first insertion: growing the table rehashed every name at each
    /// doubling, a sixth of a submit.
    init(reading entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        var count = 0
        while entries[count] != nil { count += 1 }
        variables = [:]
        variables.reserveCapacity(count)
        changes = []
        var entry = entries
        while let pointer = entry.pointee {
            // Split at the first '=' byte: walking the string by Characters (grapheme
            // breaking) was a third of a submit's instructions.
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
            entry += 1
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let nameBytes = UnsafeBufferPointer(rebasing: bytes[..<equals])
            let valueBytes = UnsafeBufferPointer(rebasing: bytes[(equals + 1)...])
            var name = String(decoding: nameBytes, as: UTF8.self)
            // orchd refuses a name it would hash in quadratic time (JSONByteReader.isStreamSafe),
            // and with it the whole submit: such a variable is left out, and said so.
            if nameBytes.contains(where: { $0 >= 0x80 }), !JSONByteReader.isStreamSafe(name) {
                changes.append("'\(name)' has more than \(JSONByteReader.maximumNonStarters) combining marks in a row, which orchd refuses in a name: the job does not get it")
                continue
            }
            if let index = variables.index(forKey: name) {
                var earlier = variables[index].key
                if !earlier.withUTF8({ Self.sameBytes($0, nameBytes) }) {
                    changes.append("'\(name)' is the same name as '\(earlier)' to orchd (Unicode canonical equivalence): the job gets only the first")
                }
                continue
            }
            var value = String(decoding: valueBytes, as: UTF8.self)
            // Decoding replaced bytes that are not UTF-8 when the text differs from them
            // (cheaper than validating the bytes a second time).
            if !name.withUTF8({ Self.sameBytes($0, nameBytes) }) || !value.withUTF8({ Self.sameBytes($0, valueBytes) }) {
                changes.append("'\(name)' is not valid UTF-8: the job gets it with U+FFFD in place of the bytes that are not")
            }
            variables[name] = value
        }
    }

    /// Whether `a` and `b` hold the same bytes: `memcmp`, where the generic `elementsEqual`
    /// stepped byte by byte through every name and value (40,000 instructions of a submit).
    private static func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }
}
