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
    /// Creates a renderer; keep one for a whole stream.
    init() {}

    /// The line for `event`, newline included, as bytes ready for write(2): the event's own
    /// writer (``Event/writeJSON(to:)``), which writes what `JSONEncoder` with `.sortedKeys` and
    /// `.withoutEscapingSlashes` wrote, without the encoder's first-use cost.
    /// - Throws: never; declared so that callers read as before.
    func bytes(_ event: Event) throws(CommandFailure) -> [UInt8] {
        var bytes = event.jsonBytes
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The line for `event` as text, newline included.
    /// - Throws: never.
    func text(_ event: Event) throws(CommandFailure) -> String {
        String(decoding: try bytes(event), as: UTF8.self)
    }
}
