import FoundationEssentials

/// `--json` output: pretty-printed, keys sorted (the encoder keeps no declaration order, and
/// scripts diffing output need a stable one), slashes plain.
enum JSONOutput {
    /// Encodes `value` as text ending with a newline.
    /// - Throws: ``CommandFailure`` if the value cannot be encoded (not expected for model types).
    static func text(_ value: some Encodable) throws(CommandFailure) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
        } catch {
            throw CommandFailure("cannot encode JSON output: \(error)")
        }
    }
}
