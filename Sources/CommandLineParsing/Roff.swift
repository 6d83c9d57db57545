/// man(7) roff for the manual pages orchctl(1) and orchd(8), which are written from the same
/// command and option declarations as `--help`, so a page and the help cannot drift.
public enum Roff {
    /// A `.TP` item for an option: its name in bold, its value in italics, then its help with
    /// "Can be repeated." and its default.
    /// - Parameter option: the option as declared.
    /// - Returns: the roff lines, ending in a newline.
    public static func item(_ option: OptionSpec) -> String {
        var label = option.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
        label += "\\fB\\-\\-\(escape(option.name))\\fR"
        if let valueName = option.valueName { label += " \\fI\(escape(valueName))\\fR" }
        var help = option.help
        if option.isRepeatable { help += " Can be repeated." }
        if let value = option.defaultValue { help += " (default: \(value))" }
        return ".TP\n\(label)\n" + escape(help) + "\n"
    }

    /// Escapes text for roff: backslashes, hyphens (so they are not broken or turned into
    /// dashes), characters outside ASCII (as `\[uXXXX]`, groff_char(7)), and a `.` or `'`
    /// starting the text (which would read as a request).
    /// - Parameter text: plain text.
    /// - Returns: the text as a roff body line.
    public static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            // Plain groff reads its input as Latin-1: a character outside ASCII goes as a
            // named Unicode glyph.
            case _ where !character.isASCII:
                result += character.unicodeScalars.map { "\\[u" + String($0.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]" }.joined()
            default: result.append(character)
            }
        }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
        return result
    }
}

extension String {
    /// The string with leading zeros up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
