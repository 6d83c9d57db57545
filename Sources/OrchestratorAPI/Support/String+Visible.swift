extension String {
    /// The text on one line with its control characters made visible: `\n`, `\t` and `\r`
    /// as those escapes, any other C0 or C1 control character (and DEL) as `\u{1B}`, and the
    /// bidirectional embeddings, overrides and isolates (U+202A...U+202E, U+2066...U+2069) as
    /// `\u{202E}`, and the invisible characters a quoted word could hide (the byte order mark
    /// U+FEFF, the zero-width space U+200B, the line and paragraph separators U+2028 and
    /// U+2029; the joiners stay, emoji use them, and so do the marks that only set a direction).
    /// A message or a table row that quotes user input then shows what is there instead of
    /// moving the terminal's cursor, breaking the row, showing the text after it reversed, or
    /// naming a key that looks like one it lists.
    public var visible: String {
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
                || [0xFEFF, 0x200B, 0x2028, 0x2029].contains(scalar.value):
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
