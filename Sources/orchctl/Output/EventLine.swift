import FoundationEssentials
import OrchestratorAPI

/// How `orchctl events` writes an event: its JSON object on one line, compact, keys sorted,
/// slashes plain, ended by a newline. JSON escapes control characters inside strings, so a
/// line is always exactly one event.
///
/// ```
/// {"at":"2026-11-29T12:00:00.000Z","attempt":1,"exitCode":null,"jobId":7,"kind":"started",...}
/// ```
struct EventLine {
    private let encoder: JSONEncoder

    /// Creates a renderer; keep one for a whole stream.
    init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// The line for `event`, newline included, as bytes ready for write(2).
    /// - Throws: ``CommandFailure`` if it cannot be encoded (not expected).
    func bytes(_ event: Event) throws(CommandFailure) -> [UInt8] {
        do {
            var bytes = Array(try encoder.encode(event))
            bytes.append(UInt8(ascii: "\n"))
            return bytes
        } catch {
            throw CommandFailure("cannot encode event \(event.seq) as JSON: \(error)")
        }
    }

    /// The line for `event` as text, newline included.
    /// - Throws: ``CommandFailure`` if it cannot be encoded (not expected).
    func text(_ event: Event) throws(CommandFailure) -> String {
        String(decoding: try bytes(event), as: UTF8.self)
    }
}
