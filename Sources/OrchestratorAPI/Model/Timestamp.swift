import FoundationEssentials

/// RFC 3339 UTC timestamps with millisecond precision, as the wire and `--json` carry them
/// (`2026-11-29T12:14:43.123Z`).
///
/// Written and read by hand with civil-date arithmetic rather than `Date.ISO8601FormatStyle`:
/// building that style loads a Gregorian calendar and the current time zone (tzset(3) reads
/// `/etc/localtime`), which cost orchctl a file read and most of a millisecond on every call
/// that decodes a job, and a UTC timestamp needs neither.
public enum Timestamp {
    /// Formats `date` as RFC 3339 UTC with milliseconds (truncated, as a clock shows them).
    ///
    /// The time is rounded to whole microseconds (as the store keeps it) before it is cut to
    /// milliseconds, so a time read back from this text prints the same text again: a Double
    /// holds `.497` as `.49699…`, which plain truncation printed as `.496`.
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``format(_:)``'s text as UTF-8, for writers that build JSON as bytes.
    static func append(_ date: Date, to bytes: inout [UInt8]) {
        // Clamped to the four-digit years (only a damaged row holds another): the text is
        // always an RFC 3339 time.
        let micro = min(max(microseconds(date), earliestSeconds * 1_000_000), latestSeconds * 1_000_000 + 999_999)
        let milliseconds = micro >= 0 ? micro / 1000 : (micro - 999) / 1000
        let (days, msOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (dayNumber, ms) = msOfDay < 0 ? (days - 1, msOfDay + 86_400_000) : (days, msOfDay)
        let (year, month, day) = civil(fromDays: dayNumber)
        let seconds = ms / 1000
        bytes.reserveCapacity(bytes.count + 24)
        append(year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(day, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        append(seconds / 3600, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(seconds / 60 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(seconds % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        append(ms % 1000, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS`, optional fraction, then `Z` or an offset such
    /// as `+02:00`).
    /// - Returns: `nil` when `text` is not such a time, names an impossible one (Feb 30), or
    ///   one whose UTC year is outside 0000...9999 (`0000-01-01T00:00:00+01:00` is in year
    ///   -1): ``format(_:)`` writes four digits, and such a time stored would be written back
    ///   as no RFC 3339 time at all, failing every listing that includes its job.
    public static func parse(_ text: String) -> Date? {
        guard hasValidFields(text) else { return nil }
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64 {
            bytes[range].reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
        }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, isDigit(bytes[index]) {
                fraction += Double(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            let rest = Array(bytes[(index + 1)...])
            let digits: [UInt8]
            if rest.count == 5, rest[2] == UInt8(ascii: ":") {
                digits = [rest[0], rest[1], rest[3], rest[4]]
            } else if rest.count == 4 {
                digits = rest
            } else {
                return nil
            }
            guard digits.allSatisfy(isDigit) else { return nil }
            let hours = Int64(digits[0] - 48) * 10 + Int64(digits[1] - 48)
            let minutes = Int64(digits[2] - 48) * 10 + Int64(digits[3] - 48)
            guard hours <= 23, minutes <= 59 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
            index = bytes.count
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = days(fromCivil: number(0..<4), number(5..<7), number(8..<10))
        let seconds = days * 86_400 + number(11..<13) * 3600 + number(14..<16) * 60 + number(17..<19) - offsetSeconds
        guard seconds >= Self.earliestSeconds, seconds <= Self.latestSeconds else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z in seconds since 1970: the times with a
    /// four-digit UTC year.
    public static let earliestSeconds = days(fromCivil: 0, 1, 1) * 86_400
    public static let latestSeconds = days(fromCivil: 9999, 12, 31) * 86_400 + 86_399

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
                guard isDigit(byte) else { return nil }
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
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        // A time from a damaged row can lie past what Int64 holds: clamped, never a trap.
        guard value >= -9_223_372_036_854_775_808.0 else { return .min }
        guard value < 9_223_372_036_854_775_808.0 else { return .max }
        return Int64(value)
    }

    /// Whether `microseconds` since 1970 is a time with a four-digit UTC year, the times
    /// ``format(_:)`` writes as they are.
    public static func isWritable(microseconds: Int64) -> Bool {
        microseconds / 1_000_000 >= earliestSeconds && microseconds / 1_000_000 <= latestSeconds
    }

    /// The date `microseconds` after the Unix epoch.
    public static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    // MARK: - Civil dates (proleptic Gregorian, H. Hinnant's days_from_civil / civil_from_days)

    /// Days from 1970-01-01 to the given date (negative before it).
    /// - Parameters:
    ///   - year: the year, e.g. 2026.
    ///   - month: 1-12.
    ///   - day: 1-31; it must exist in that month.
    public static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Appends `value` in decimal, zero-padded on the left to `width` characters. A negative
    /// year (before 0000) keeps its sign after the padding, as `String(value)` padded did.
    private static func append(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
        guard value >= 0 else {
            let digits = String(value).utf8
            if digits.count < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - digits.count)) }
            bytes.append(contentsOf: digits)
            return
        }
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        let end = bytes.count + max(width, count)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(width, count)))
        var remaining = value
        for index in stride(from: end - 1, through: end - count, by: -1) {
            bytes[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
        }
    }
}
