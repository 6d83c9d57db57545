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
            return compactingEmptyContainers(String(decoding: try encoder.encode(value), as: UTF8.self)) + "\n"
        } catch {
            throw CommandFailure("cannot encode JSON output: \(error)")
        }
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
