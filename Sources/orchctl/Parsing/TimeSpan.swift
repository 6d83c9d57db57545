/// systemd's time span syntax (systemd.time(7)): `30s`, `5min`, `2h`, `1d`, `1h30min`,
/// `1h 30min`, `500ms`, `1.5h`, and a plain number meaning seconds.
enum TimeSpan {
    /// Unit words and their length in microseconds, longest spellings first so `ms` is not
    /// read as `m` + `s`.
    private static let units: [(String, Double)] = [
        ("usec", 1), ("us", 1), ("µs", 1),
        ("msec", 1_000), ("ms", 1_000),
        ("seconds", 1_000_000), ("second", 1_000_000), ("secs", 1_000_000), ("sec", 1_000_000), ("s", 1_000_000),
        ("minutes", 60_000_000), ("minute", 60_000_000), ("min", 60_000_000), ("m", 60_000_000),
        ("hours", 3_600_000_000), ("hour", 3_600_000_000), ("hr", 3_600_000_000), ("h", 3_600_000_000),
        ("days", 86_400_000_000), ("day", 86_400_000_000), ("d", 86_400_000_000),
        ("weeks", 604_800_000_000), ("week", 604_800_000_000), ("w", 604_800_000_000),
    ]

    /// Parses `text`.
    /// - Returns: the span, or `nil` when the text is not a time span.
    static func parse(_ text: String) -> Duration? {
        var rest = Substring(text.trimmingSpaces)
        guard !rest.isEmpty else { return nil }
        var totalMicroseconds = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count).drop { $0 == " " }
            let word = rest.prefix { $0.isLetter }
            let factor: Double
            if word.isEmpty {
                factor = 1_000_000
            } else if let unit = units.first(where: { $0.0 == word }) {
                factor = unit.1
            } else {
                return nil
            }
            totalMicroseconds += value * factor
            rest = rest.dropFirst(word.count).drop { $0 == " " }
        }
        guard totalMicroseconds < 1e17 else { return nil }
        return .microseconds(Int64(totalMicroseconds.rounded()))
    }

    /// Formats a span compactly for people: `1h 2min 3s`, `450ms`.
    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if seconds < 1 {
            return "\(max(0, attoseconds / 1_000_000_000_000_000))ms"
        }
        var remaining = seconds
        var parts: [String] = []
        for (unit, length) in [("d", Int64(86_400)), ("h", 3_600), ("min", 60), ("s", 1)] where remaining >= length {
            parts.append("\(remaining / length)\(unit)")
            remaining %= length
        }
        if seconds < 10, attoseconds >= 100_000_000_000_000_000 {
            // Short spans keep a decimal so `1.5s` does not read as `1s`.
            return "\(seconds).\(attoseconds / 100_000_000_000_000_000)s"
        }
        return parts.prefix(2).joined(separator: " ")
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        let trimmed = drop { $0 == " " || $0 == "\t" }
        return trimmed.dropLast(trimmed.reversed().prefix { $0 == " " || $0 == "\t" }.count)
    }
}
