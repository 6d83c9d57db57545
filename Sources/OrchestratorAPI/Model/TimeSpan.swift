/// Time spans in systemd's syntax (systemd.time(7)): `30s`, `5min`, `2h`, `1d`, `1h30min`,
/// `1.5h`, `2min 30s`; a plain number is seconds.
public enum TimeSpan {
    /// Microseconds per unit name, as systemd.time(7) lists them (a month is 30.44 days, a
    /// year 365.25 days).
    private static let units: [String: Double] = {
        var table: [String: Double] = [:]
        let second = 1_000_000.0
        let groups: [([String], Double)] = [
            (["usec", "us", "µs", "μs"], 1),
            (["msec", "ms"], 1_000),
            (["seconds", "second", "sec", "s", ""], second),
            (["minutes", "minute", "min", "m"], 60 * second),
            (["hours", "hour", "hr", "h"], 3_600 * second),
            (["days", "day", "d"], 86_400 * second),
            (["weeks", "week", "w"], 604_800 * second),
            (["months", "month", "M"], 2_629_800 * second),
            (["years", "year", "y"], 31_557_600 * second),
        ]
        for (names, value) in groups { for name in names { table[name] = value } }
        return table
    }()

    /// Parses a span.
    /// - Returns: the span in whole microseconds, or `nil` when `text` is not a valid
    ///   non-negative span.
    public static func microseconds(_ text: String) -> Int64? {
        var total = 0.0
        var rest = Substring(text.trimmingWhitespace())
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count).drop { $0 == " " }
            let unit = rest.prefix { $0.isLetter || $0 == "µ" || $0 == "μ" }
            guard let scale = units[String(unit)] else { return nil }
            rest = rest.dropFirst(unit.count).drop { $0 == " " }
            total += value * scale
        }
        guard total.isFinite, total < 9.2e18 else { return nil }
        return Int64(total.rounded())
    }

    /// Parses a span as a `Duration`; `nil` when invalid.
    public static func parse(_ text: String) -> Duration? {
        microseconds(text).map { .microseconds($0) }
    }

    /// Formats a span compactly for people: `1h 2min`, `42s`, `1.5s`, `450ms` (the two
    /// largest units, a decimal below 10 s).
    public static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if seconds < 1 {
            return "\(max(0, attoseconds / 1_000_000_000_000_000))ms"
        }
        if seconds < 10, attoseconds >= 100_000_000_000_000_000 {
            // Short spans keep a decimal so `1.5s` does not read as `1s`.
            return "\(seconds).\(attoseconds / 100_000_000_000_000_000)s"
        }
        var remaining = seconds
        var parts: [String] = []
        for (unit, length) in [("d", Int64(86_400)), ("h", 3_600), ("min", 60), ("s", 1)] where remaining >= length {
            parts.append("\(remaining / length)\(unit)")
            remaining %= length
        }
        return parts.prefix(2).joined(separator: " ")
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? endIndex
        return self[start..<max(start, end)]
    }
}
