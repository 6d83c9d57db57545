import CommandLineParsing
/// `key: value` lines with the values aligned, as `show` and `info` print them.
enum KeyValueLines {
    /// Renders the pairs in order, one per line.
    static func render(_ pairs: [(String, String)]) -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        var text = ""
        for (key, value) in pairs {
            text += key + ":" + String(repeating: " ", count: width - key.count + 1) + value + "\n"
        }
        return text
    }
}
