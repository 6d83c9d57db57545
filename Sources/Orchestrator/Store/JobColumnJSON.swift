import OrchestratorAPI

/// The JSON text of a job's argument vector, and of its environment and labels, written
/// and (for the argument vector) read without `JSONEncoder` and `JSONDecoder` in the common
/// case: every job's row is written once and read at its start, and the coders cost far more
/// than the few words (encoding the environment was a fifth of orchd's work for a submit).
///
/// Reading handles only words of printable ASCII without `"` and `\`; anything else returns
/// `nil`, and the caller uses the decoder.
enum JobColumnJSON {
    /// The JSON array of `words`.
    static func encode(_ words: [String]) -> String {
        var writer = JSONByteWriter(capacity: words.reduce(2) { $0 + $1.utf8.count + 3 })
        writer.array(words)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The JSON object of `map`, its keys sorted (the same text for the same map, and the
    /// text `JSONEncoder` with `.sortedKeys` wrote: environments are stored once per
    /// distinct text).
    static func encode(_ map: [String: String]) -> String {
        var writer = JSONByteWriter(capacity: map.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 })
        writer.object(map)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The words of `["a","b"]` (no whitespace, no escapes, printable ASCII), else `nil`.
    static func decode(_ text: String) -> [String]? {
        var utf8 = text.utf8[...]
        guard utf8.first == UInt8(ascii: "["), utf8.last == UInt8(ascii: "]") else { return nil }
        utf8 = utf8.dropFirst().dropLast()
        var words: [String] = []
        if utf8.isEmpty { return words }
        while true {
            guard utf8.first == UInt8(ascii: "\"") else { return nil }
            utf8 = utf8.dropFirst()
            guard let close = utf8.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            let word = utf8[..<close]
            guard word.allSatisfy(isPlain) else { return nil }
            words.append(String(decoding: word, as: UTF8.self))
            utf8 = utf8[utf8.index(after: close)...]
            if utf8.isEmpty { return words }
            guard utf8.first == UInt8(ascii: ",") else { return nil }
            utf8 = utf8.dropFirst()
        }
    }

    /// Printable ASCII other than `"` and `\`: written by `JSONEncoder` as is.
    private static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
