import FoundationEssentials
import OrchestratorAPI
#if canImport(Glibc)
import Glibc
#endif

/// The value of `submit --at`: an instant in RFC 3339 (`2030-06-01T08:00:00Z`, offsets such as
/// `+02:00` allowed); a local date and time without a zone (`2030-06-01 08:00`, as
/// systemd.time(7) reads it); or a local time of day (`08:00`, `08:00:30`) meaning its next
/// occurrence.
public enum StartTime: Hashable, Sendable {
    /// An absolute instant.
    case instant(Date)
    /// A date and time on the local clock.
    case localDateTime(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)
    /// A local time of day: the next time the local clock shows it, today or tomorrow.
    case timeOfDay(hour: Int, minute: Int, second: Int)

    /// Parses `--at`'s value.
    /// - Returns: `nil` unless `text` is RFC 3339 with a date, a `T` and a zone; a date
    ///   `YYYY-MM-DD` that exists, alone (midnight) or followed by a space or `T` and a time
    ///   of day, without a zone (local); or a time of day: `HH:MM` / `HH:MM:SS` with hour 0-23
    ///   (one or two digits) and two-digit minutes and seconds 0-59.
    public static func parse(_ text: String) -> StartTime? {
        if let instant = Timestamp.parse(text) { return .instant(instant) }
        let bytes = Array(text.utf8)
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-") else { return timeOfDay(text) }
        // A date first: local, with or without a time of day.
        guard bytes.count == 10 || bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"),
              bytes[7] == UInt8(ascii: "-"),
              bytes[..<10].indices.allSatisfy({ $0 == 4 || $0 == 7 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) }),
              let year = Int(String(decoding: bytes[0..<4], as: UTF8.self)),
              let month = Int(String(decoding: bytes[5..<7], as: UTF8.self)),
              let day = Int(String(decoding: bytes[8..<10], as: UTF8.self)),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        guard bytes.count > 10 else { return .localDateTime(year: year, month: month, day: day, hour: 0, minute: 0, second: 0) }
        guard case .timeOfDay(let hour, let minute, let second)? = timeOfDay(String(decoding: bytes[11...], as: UTF8.self)) else {
            return nil
        }
        return .localDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// `HH:MM` or `HH:MM:SS`, as ``parse(_:)`` takes a time of day.
    private static func timeOfDay(_ text: String) -> StartTime? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3,
              fields.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              (1...2).contains(fields[0].count), fields.dropFirst().allSatisfy({ $0.count == 2 }),
              let hour = Int(fields[0]), let minute = Int(fields[1]),
              (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = fields.count == 3 ? Int(fields[2]) ?? 60 : 0
        guard (0...59).contains(second) else { return nil }
        return .timeOfDay(hour: hour, minute: minute, second: second)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// How long ago an `--at` date and time (or instant) may be and still be taken, meaning
    /// "now": a script's `date -Iseconds` is a second old when orchd reads it.
    public static let pastTolerance: TimeInterval = 60

    /// ``resolve(now:zone:)`` for a job's start, refusing a date and time that has passed:
    /// a job meant for another time (a mistyped date, a copied example) must not start at
    /// once. `at(1)` refuses such a time too. A time of day never has passed (its next
    /// occurrence is meant).
    /// - Parameters:
    ///   - command: the command word, for the message.
    ///   - startNow: how to start the job now instead, for the message.
    /// - Throws: ``CommandLineError`` (`invalidValue`) when the instant lies more than
    ///   ``pastTolerance`` seconds before `now`.
    public func resolveStart(
        now: Date, zone: LocalTimeZone = .system, command: String, startNow: String
    ) throws(CommandLineError) -> Date {
        let instant = resolve(now: now, zone: zone)
        guard instant.timeIntervalSince(now) < -Self.pastTolerance else { return instant }
        throw CommandLineError(
            .invalidValue,
            "invalid value for option '--at': \(self) has passed; give a time to come, or \(startNow)",
            command: command)
    }

    /// The instant this start time names, seen at `now`: an instant as is; a local date and
    /// time where `zone`'s clock shows it; a time of day at its next occurrence strictly after
    /// `now` in `zone` (today, else tomorrow).
    public func resolve(now: Date, zone: LocalTimeZone = .system) -> Date {
        switch self {
        case .instant(let date):
            return date
        case let .localDateTime(year, month, day, hour, minute, second):
            return zone.instant(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        case .timeOfDay(let hour, let minute, let second):
            return zone.nextOccurrence(hour: hour, minute: minute, second: second, after: now)
        }
    }
}

extension StartTime: CustomStringConvertible {
    /// The start time as `--at` takes it: RFC 3339 in UTC (an instant given with another
    /// offset reads in UTC), `YYYY-MM-DD HH:MM[:SS]` or `HH:MM[:SS]`.
    public var description: String {
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        func clock(_ hour: Int, _ minute: Int, _ second: Int) -> String {
            "\(twoDigits(hour)):\(twoDigits(minute))" + (second == 0 ? "" : ":\(twoDigits(second))")
        }
        switch self {
        case .instant(let date):
            // In UTC, whatever offset it was given with; milliseconds only when it has some.
            let text = Timestamp.format(date)
            return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
        case let .localDateTime(year, month, day, hour, minute, second):
            // Four digits, as `--at` takes the year (0001, not 1).
            let yearText = String(year)
            return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
                + "-\(twoDigits(month))-\(twoDigits(day)) " + clock(hour, minute, second)
        case let .timeOfDay(hour, minute, second):
            return clock(hour, minute, second)
        }
    }
}

/// The time zone `HH:MM` is read in. FoundationEssentials' `TimeZone.current` does not know
/// the local zone on Linux (it reports GMT whatever `TZ` or `/etc/localtime` say), so the
/// system zone goes through Glibc's localtime_r(3) and mktime(3), which honour both.
public enum LocalTimeZone: Hashable, Sendable {
    /// The process's local time zone (`TZ`, else `/etc/localtime`), daylight saving included.
    case system
    /// A fixed offset east of UTC, in seconds; for tests.
    case fixed(secondsFromGMT: Int)

    /// The instant at which the local clock reads this date and time. A time that the clock
    /// skips (the hour lost when daylight saving starts) is read as mktime(3) normalises it,
    /// that much later; one it shows twice, as its first showing.
    public func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date {
        switch self {
        case .fixed(let offset):
            let days = Timestamp.days(fromCivil: Int64(year), Int64(month), Int64(day))
            return Date(timeIntervalSince1970: Double(days * 86_400 + Int64(hour * 3_600 + minute * 60 + second) - Int64(offset)))
        case .system:
            var fields = tm()
            fields.tm_year = Int32(year - 1900)
            fields.tm_mon = Int32(month - 1)
            fields.tm_mday = Int32(day)
            fields.tm_hour = Int32(hour)
            fields.tm_min = Int32(minute)
            fields.tm_sec = Int32(second)
            fields.tm_isdst = -1
            return Date(timeIntervalSince1970: Double(mktime(&fields)))
        }
    }

    /// The first instant after `now` at which the local clock reads `hour:minute:second`.
    public func nextOccurrence(hour: Int, minute: Int, second: Int, after now: Date) -> Date {
        let nowSeconds = now.timeIntervalSince1970
        switch self {
        case .fixed(let offset):
            let local = Int64(nowSeconds.rounded(.down)) + Int64(offset)
            let midnight = local - ((local % 86_400) + 86_400) % 86_400
            var candidate = midnight + Int64(hour * 3_600 + minute * 60 + second) - Int64(offset)
            if Double(candidate) <= nowSeconds { candidate += 86_400 }
            return Date(timeIntervalSince1970: Double(candidate))
        case .system:
            // Today at that time, else tomorrow: mktime normalises the day of the month and
            // picks the daylight-saving offset in force at the result (tm_isdst = -1).
            for dayOffset in 0...1 {
                var seconds = time_t(nowSeconds.rounded(.down))
                var fields = tm()
                localtime_r(&seconds, &fields)
                fields.tm_mday += Int32(dayOffset)
                fields.tm_hour = Int32(hour)
                fields.tm_min = Int32(minute)
                fields.tm_sec = Int32(second)
                fields.tm_isdst = -1
                let candidate = mktime(&fields)
                if candidate != -1, Double(candidate) > nowSeconds {
                    return Date(timeIntervalSince1970: Double(candidate))
                }
            }
            // Not reached for valid times; a day later is the best answer left.
            return now.addingTimeInterval(86_400)
        }
    }
}
