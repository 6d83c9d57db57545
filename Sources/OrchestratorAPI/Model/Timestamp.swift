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
        // The format style rolls impossible dates over (Feb 30 becomes Mar 2): refuse them.
        guard hasValidFields(text) else { return nil }
        if let date = try? style.parse(text) { return date }
        return try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text)
    }

    /// Whether `YYYY-MM-DDTHH:MM:SS` at the start of `text` names a real date and time (RFC
    /// 3339 §5.7: day within its month, leap years included; hour 0-23; minute 0-59; second
    /// 0-60).
    static func hasValidFields(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(19))
        guard bytes.count == 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), hour <= 23, minute <= 59, second <= 60
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
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
