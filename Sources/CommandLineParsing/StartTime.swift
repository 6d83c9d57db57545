import FoundationEssentials
import OrchestratorAPI
#if canImport(Glibc)
import Glibc
#endif

/// The value of `submit --at`: an instant in RFC 3339 (`2026-12-01T08:00:00Z`, offsets such as
/// `+02:00` allowed), or a local time of day (`08:00`, `08:00:30`) meaning its next occurrence.
public enum StartTime: Hashable, Sendable {
    /// An absolute instant.
    case instant(Date)
    /// A local time of day: the next time the local clock shows it, today or tomorrow.
    case timeOfDay(hour: Int, minute: Int, second: Int)

    /// Parses `--at`'s value.
    /// - Returns: `nil` unless `text` is RFC 3339 with a date, a `T` and a zone, or
    ///   `HH:MM` / `HH:MM:SS` with hour 0-23 (one or two digits) and two-digit minutes and
    ///   seconds 0-59.
    public static func parse(_ text: String) -> StartTime? {
        if text.contains("T") {
            return Timestamp.parse(text).map(StartTime.instant)
        }
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

    /// The instant this start time names, seen at `now`: an instant as is; a time of day at
    /// its next occurrence strictly after `now` in `zone` (today, else tomorrow).
    public func resolve(now: Date, zone: LocalTimeZone = .system) -> Date {
        switch self {
        case .instant(let date):
            return date
        case .timeOfDay(let hour, let minute, let second):
            return zone.nextOccurrence(hour: hour, minute: minute, second: second, after: now)
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
