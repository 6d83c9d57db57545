/// The JSON text of a job's argument vector, written and read without `JSONEncoder` and
/// `JSONDecoder` in the common case: every job's row is written once and read at its start,
/// and the coders cost far more than the few words.
///
/// Only text the coders themselves would produce byte for byte is handled here: words of
/// printable ASCII without `"` and `\` (`JSONEncoder` with `.withoutEscapingSlashes` writes
/// those as they are). Anything else returns `nil`, and the caller uses the coder.
enum StringArrayJSON {
    /// `["a","b"]` for words that need no escaping, else `nil`.
    static func encode(_ words: [String]) -> String? {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(words.reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, word) in words.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for byte in word.utf8 {
                guard isPlain(byte) else { return nil }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
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
