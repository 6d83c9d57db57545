import FoundationEssentials

/// RFC 3339 UTC timestamps with millisecond precision, as the wire and `--json` carry them
/// (`2026-11-29T12:14:43.123Z`).
public enum Timestamp {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// Formats `date` as RFC 3339 UTC with milliseconds.
    public static func format(_ date: Date) -> String {
        date.formatted(style)
    }

    /// Parses RFC 3339 with or without fractional seconds.
    /// - Returns: `nil` when `text` is not such a time.
    public static func parse(_ text: String) -> Date? {
        if let date = try? style.parse(text) { return date }
        return try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text)
    }

    /// Microseconds since the Unix epoch, as the store keeps times.
    public static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// The date `microseconds` after the Unix epoch.
    public static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}
