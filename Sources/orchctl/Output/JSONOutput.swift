import FoundationEssentials

/// `--json` output: pretty-printed, keys in the order the types encode them, slashes plain.
enum JSONOutput {
    /// Encodes `value` as text ending with a newline.
    /// - Throws: ``CommandFailure`` if the value cannot be encoded (not expected for model types).
    static func text(_ value: some Encodable) throws(CommandFailure) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
        } catch {
            throw CommandFailure("cannot encode JSON output: \(error)")
        }
    }
}
