/// Time spans in systemd's syntax (systemd.time(7)): `30s`, `5min`, `2h`, `1d`, `1h30min`,
/// `1h 30min`, `1.5h`, `2 days`, `5min 30s`; a plain number alone is seconds.
///
/// Stricter than systemd in one way: a number without a unit is accepted only as the whole
/// span. systemd reads `1h30` as 1 h 30 s, which people mean as 1 h 30 min, so such a span is
/// refused as ambiguous rather than guessed.
public enum TimeSpan {
    /// Why a text is not a span; ``message`` is one sentence for people, naming the text.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, with an example of what is right where that helps.
        public let message: String
        public var description: String { message }
        /// Creates a reason.
        public init(message: String) { self.message = message }
    }

    /// Microseconds per unit name, as systemd.time(7) lists them (a month is 30.44 days, a
    /// year 365.25 days).
    private static let units: [String: Double] = {
        var table: [String: Double] = [:]
        let second = 1_000_000.0
        let groups: [([String], Double)] = [
            (["usec", "us", "µs", "μs"], 1),
            (["msec", "ms"], 1_000),
            (["seconds", "second", "sec", "s"], second),
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

    /// The unit names people are reminded of when they give an unknown one.
    private static let unitHint = "us, ms, s, min, h, d, w, M, y"

    /// The largest span accepted: what fits in Int64 microseconds, rounded down to whole years
    /// (about 292,000 years).
    private static let limit = 9.2e18

    /// Parses a span, saying what is wrong when it is not one.
    /// - Parameter text: the span; leading and trailing whitespace is ignored.
    /// - Returns: the span in whole microseconds (fractions are rounded).
    /// - Throws: ``Invalid`` when `text` is empty, negative, has an unknown unit, a number
    ///   without a unit next to other parts (`1h30`), or is longer than about 292,000 years.
    public static func parseMicroseconds(_ text: String) throws(Invalid) -> Int64 {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw Invalid(message: "a time span cannot be empty (e.g. 30s, 5min, 1h30min)") }
        if trimmed.first == "-" || trimmed.indices.contains(where: { index in
            trimmed[index] == "-" && trimmed[trimmed.index(after: index)...].first.map { $0.isNumber || $0 == "." } == true
        }) {
            throw Invalid(message: "'\(text)' is negative; a time span cannot be negative")
        }
        var parts: [(value: Double, unit: Substring)] = []
        var rest = trimmed
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty else {
                let word = rest.prefix { !$0.isWhitespace }
                throw Invalid(message: "'\(text)' is not a time span: expected a number at '\(word)' (e.g. 30s, 5min, 1h30min)")
            }
            guard number.filter({ $0 == "." }).count <= 1, number.contains(where: \.isNumber), let value = Double(number) else {
                throw Invalid(message: "'\(text)' is not a time span: '\(number)' is not a number")
            }
            rest = rest.dropFirst(number.count).drop { $0.isWhitespace }
            let unit = rest.prefix { $0.isLetter }
            if unit.isEmpty, let next = rest.first, !next.isNumber, next != "." {
                throw Invalid(message: "'\(text)' is not a time span: unexpected '\(next)'")
            }
            if !unit.isEmpty, units[String(unit)] == nil {
                throw Invalid(message: "'\(text)' is not a time span: unknown unit '\(unit)' (units: \(unitHint))")
            }
            rest = rest.dropFirst(unit.count).drop { $0.isWhitespace }
            parts.append((value, unit))
        }
        if parts.count > 1, let bare = parts.first(where: { $0.unit.isEmpty }) {
            throw Invalid(
                message: "'\(text)' is ambiguous: the number \(formatNumber(bare.value)) has no unit; give every number its unit (e.g. 1h30min, not 1h30)")
        }
        let total = parts.reduce(0.0) { $0 + $1.value * (units[String($1.unit)] ?? 1_000_000) }
        guard total.isFinite, total < limit else {
            throw Invalid(message: "'\(text)' is too long for a time span (at most about 292,000 years)")
        }
        return Int64(total.rounded())
    }

    /// Parses a span; `nil` when invalid (``parseMicroseconds(_:)`` says why).
    public static func microseconds(_ text: String) -> Int64? {
        try? parseMicroseconds(text)
    }

    /// Parses a span as a `Duration`; `nil` when invalid (``parseMicroseconds(_:)`` says why).
    public static func parse(_ text: String) -> Duration? {
        microseconds(text).map(Duration.init(microseconds:))
    }

    /// `30` rather than `30.0` in messages.
    private static func formatNumber(_ value: Double) -> String {
        value == value.rounded() && value < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Formats a span compactly for people: `1h 2min`, `42s`, `1.5s`, `450ms`, `1.5ms`,
    /// `400us` (the two largest units, a decimal below 10 s and below 10 ms; microseconds
    /// below a millisecond, as systemd writes them, so that a span orchd takes never reads as
    /// `0ms`). Zero and less are `0ms`.
    public static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if seconds < 1 {
            let microseconds = max(0, attoseconds / 1_000_000_000_000)
            if seconds < 0 || microseconds == 0 { return "0ms" }
            if microseconds < 1_000 { return "\(microseconds)us" }
            if microseconds < 10_000, microseconds % 1_000 >= 100 { return "\(microseconds / 1_000).\(microseconds % 1_000 / 100)ms" }
            return "\(microseconds / 1_000)ms"
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
