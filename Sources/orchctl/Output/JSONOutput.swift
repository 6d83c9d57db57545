import FoundationEssentials
import OrchestratorAPI

/// `--json` output: pretty-printed, keys sorted (the encoder keeps no declaration order, and
/// scripts diffing output need a stable one), slashes plain.
enum JSONOutput {
    /// Encodes `value` as text ending with a newline.
    /// - Throws: ``CommandFailure`` if the value cannot be encoded (not expected for model types).
    static func text(_ value: some Encodable) throws(CommandFailure) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return compactingEmptyContainers(String(decoding: try encoder.encode(value), as: UTF8.self)) + "\n"
        } catch {
            throw CommandFailure("cannot encode JSON output: \(error)")
        }
    }

    /// Encodes `value`, which writes itself (jobs, arrays of jobs), as the general
    /// ``text(_:)`` does, without `JSONEncoder`: its compact text (``JSONByteEncodable``, keys
    /// already in sorted order) laid out as the encoder's `.prettyPrinted` lays it out. The
    /// encoder's first use was most of `status --json`'s work.
    /// - Throws: never; declared as the general one is, so that call sites read alike.
    static func text(_ value: some Encodable & JSONByteEncodable) throws(CommandFailure) -> String {
        prettyPrinted(value.jsonBytes) + "\n"
    }

    /// Compact JSON text (no whitespace outside strings, as ``JSONByteWriter`` writes it) laid
    /// out as `JSONEncoder`'s `.prettyPrinted` does, two spaces a level and `" : "` after a
    /// key, with empty arrays and objects kept as `[]` and `{}` (``compactingEmptyContainers(_:)``).
    static func prettyPrinted(_ compact: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(compact.count * 2)
        var depth = 0
        var inString = false
        var escaped = false
        func newline() {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
        }
        var index = 0
        while index < compact.count {
            let byte = compact[index]
            index += 1
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                out.append(byte)
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                out.append(byte)
                if index < compact.count, compact[index] == (byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
                    out.append(compact[index])
                    index += 1
                } else {
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                newline()
                out.append(byte)
            case UInt8(ascii: ","):
                out.append(byte)
                newline()
            case UInt8(ascii: ":"):
                out.append(contentsOf: " : ".utf8)
            default:
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Writes an empty array or object as `[]` or `{}`: swift-corelibs-foundation's pretty
    /// printer writes them across three lines, the middle one empty.
    static func compactingEmptyContainers(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var result: [Substring] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if index + 2 < lines.count, let open = line.last, open == "[" || open == "{",
               lines[index + 1].isEmpty,
               lines[index + 2].trimmingPrefix(while: { $0 == " " }) == (open == "[" ? "]" : "}")
                   || lines[index + 2].trimmingPrefix(while: { $0 == " " }) == (open == "[" ? "]," : "},") {
                let closing = lines[index + 2].trimmingPrefix(while: { $0 == " " })
                result.append(line + closing)
                index += 3
                continue
            }
            result.append(line)
            index += 1
        }
        return result.joined(separator: "\n")
    }
}
