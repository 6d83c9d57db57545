/// How many terminal columns text takes, as wcwidth(3) counts them but without depending on
/// the process locale (orchctl runs under `LANG=C` too): East Asian wide and fullwidth
/// characters (CJK, Hangul, fullwidth forms) and emoji take two columns, combining marks,
/// format characters and zero-width joiners none, everything else one. Counted per grapheme
/// cluster, so an emoji sequence joined by ZWJ or a flag counts once, as terminals draw it.
///
/// The wide ranges follow Unicode's EastAsianWidth.txt (W and F); emoji are the characters
/// with `Emoji_Presentation`, or any emoji followed by VS16 (U+FE0F).
enum DisplayWidth {
    /// The columns `text` takes.
    static func of(_ text: some StringProtocol) -> Int {
        // Printable ASCII, nearly every cell of a table, is a column a byte: no grapheme
        // breaking, which was half of rendering `status`.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        return text.reduce(0) { $0 + of($1) }
    }

    /// The columns one character (grapheme cluster) takes: 0, 1 or 2.
    static func of(_ character: Character) -> Int {
        if character.isASCII {
            // Control characters draw nothing; tables make them visible before counting.
            guard let value = character.asciiValue else { return 1 }
            return value < 0x20 || value == 0x7F ? 0 : 1
        }
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
        if first.properties.isEmojiPresentation || isWide(first.value) { return 2 }
        if scalars.allSatisfy(isZeroWidth) { return 0 }
        return 1
    }

    /// `text` cut to at most `width` columns, ending with `…` when anything was cut. A cut
    /// never leaves half of an escape `String.visible` wrote (`\u{1B}`): it goes before the
    /// escape's backslash instead, so `\u{1B…` never reads as a character it is not.
    /// - Parameter width: the columns available (0 gives the empty string).
    static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        guard of(text) > width else { return text }
        var kept = prefix(text, fitting: width - 1)
        // What follows the last backslash: nothing, `u`, or `u{` and hex digits is an escape
        // cut short.
        if let backslash = kept.lastIndex(of: "\\") {
            let rest = kept[kept.index(after: backslash)...]
            let cutShort = rest.isEmpty || rest == "u"
                || (rest.hasPrefix("u{") && rest.dropFirst(2).allSatisfy(\.isHexDigit))
            if cutShort { kept.removeSubrange(backslash...) }
        }
        return kept + "…"
    }

    /// The longest start of `text` that fits `width` columns (a wide character that would
    /// straddle the edge is left out).
    static func prefix(_ text: String, fitting width: Int) -> String {
        var used = 0
        var result = ""
        for character in text {
            let next = of(character)
            if used + next > width { break }
            used += next
            result.append(character)
        }
        return result
    }

    /// `text` followed by spaces up to `width` columns.
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - of(text)))
    }

    /// Combining marks, format characters (ZWJ, directional marks, soft hyphen) and
    /// variation selectors.
    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return true
        default: return (0xFE00...0xFE0F).contains(scalar.value) || (0xE0100...0xE01EF).contains(scalar.value)
        }
    }

    /// Whether `value` is East Asian Wide or Fullwidth.
    static func isWide(_ value: UInt32) -> Bool {
        // A linear scan: a table cell has a few dozen characters, and only non-ASCII ones get here.
        wideRanges.contains { $0.contains(value) }
    }

    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initial consonants
        0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK strokes, enclosed, compatibility
        0x3400...0x4DBF,  // CJK Unified Ideographs Extension A
        0x4E00...0x9FFF,  // CJK Unified Ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo Extended-A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x16FE0...0x16FE4, 0x17000...0x18CFF,  // Tangut, Khitan
        0x1B000...0x1B2FF,  // Kana supplement and extensions, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK Extensions B-F
        0x30000...0x3FFFD,  // CJK Extensions G-H
    ]
}
