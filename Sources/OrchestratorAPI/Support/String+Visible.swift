extension String {
    /// The text on one line with its control characters made visible: `\n`, `\t` and `\r`
    /// as those escapes, any other C0 or C1 control character (and DEL) as `\u{1B}`. A message
    /// or a table row that quotes user input then shows what is there instead of moving the
    /// terminal's cursor or breaking the row.
    public var visible: String {
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
