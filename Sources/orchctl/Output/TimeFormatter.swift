import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Formats times for people, in the local time zone (localtime_r(3), honouring `TZ`) or in
/// UTC (for tests and reproducible output). `--json` carries RFC 3339 UTC instead.
struct TimeFormatter: Sendable {
    /// Whether to show local time or UTC.
    var utc = false

    /// `2026-11-29 12:14:43`.
    func dateTime(_ date: Date) -> String {
        let t = fields(date)
        return "\(t.year)-\(pad(t.month))-\(pad(t.day)) \(pad(t.hour)):\(pad(t.minute)):\(pad(t.second))"
    }

    /// A short form for tables: `12:14:43` today, `11-28 12:14` this year, else `2025-11-28`.
    func compact(_ date: Date, now: Date) -> String {
        let t = fields(date)
        let n = fields(now)
        if t.year == n.year && t.month == n.month && t.day == n.day {
            return "\(pad(t.hour)):\(pad(t.minute)):\(pad(t.second))"
        }
        if t.year == n.year {
            return "\(pad(t.month))-\(pad(t.day)) \(pad(t.hour)):\(pad(t.minute))"
        }
        return "\(t.year)-\(pad(t.month))-\(pad(t.day))"
    }

    /// A short distance from `now`: `5s ago`, `4m ago`, `3h ago`, `2d ago`, in whole units
    /// rounded down, as the age of a thing done is told. A time to come reads `in 4m`: its
    /// seconds are counted up, so it never reads sooner than it is (0.4 s ahead is `in 1s`,
    /// not `0s ago`, the look of a start that has happened), and the larger units are rounded
    /// to the nearest, so a job delayed by 2h reads `in 2h` a moment later, not `in 1h`.
    func relative(_ date: Date, now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        guard seconds > 0 else {
            let magnitude = Int(abs(seconds).rounded(.down))
            switch magnitude {
            case ..<60: return "\(magnitude)s ago"
            case ..<3600: return "\(magnitude / 60)m ago"
            case ..<86_400: return "\(magnitude / 3600)h ago"
            default: return "\(magnitude / 86_400)d ago"
            }
        }
        let magnitude = Int(seconds.rounded(.up))
        if magnitude < 60 { return "in \(magnitude)s" }
        // Each unit to the nearest; one that rounds up to the next unit reads in that one.
        let minutes = (magnitude + 30) / 60
        if minutes < 60 { return "in \(minutes)m" }
        let hours = (magnitude + 1800) / 3600
        if hours < 24 { return "in \(hours)h" }
        return "in \((magnitude + 43_200) / 86_400)d"
    }

    /// A time to come as ``compact(_:now:)`` shows it, rounded up to what it shows: a start
    /// time must not read sooner than it is (piped, a retry 0.4 s away would show the second
    /// its previous attempt started in; a start at 08:00:30 on another day reads `08:01`). In
    /// another year it keeps its time of day (`2027-06-01 08:00`), where the date alone
    /// suffices for a past submit.
    func compactAhead(_ date: Date, now: Date) -> String {
        let second = Self.roundedUp(date)
        let (s, n) = (fields(second), fields(now))
        if s.year == n.year && s.month == n.month && s.day == n.day { return compact(second, now: now) }
        let minute = Date(timeIntervalSince1970: (second.timeIntervalSince1970 / 60).rounded(.up) * 60)
        let t = fields(minute)
        guard t.year != n.year else { return compact(minute, now: now) }
        return "\(t.year)-\(pad(t.month))-\(pad(t.day)) \(pad(t.hour)):\(pad(t.minute))"
    }

    /// A time to come as ``dateTime(_:)`` shows it, rounded up to the whole second as
    /// ``compactAhead(_:now:)`` (so `show` and `status` name the same second).
    func dateTimeAhead(_ date: Date) -> String {
        dateTime(Self.roundedUp(date))
    }

    /// A time to come in a message: `04:06:30` today, else `2026-12-03 04:06:30`; rounded up
    /// to the whole second, as ``compactAhead(_:now:)``.
    func clockAhead(_ date: Date, now: Date) -> String {
        let rounded = Self.roundedUp(date)
        let (t, n) = (fields(rounded), fields(now))
        guard t.year == n.year && t.month == n.month && t.day == n.day else { return dateTime(rounded) }
        return "\(pad(t.hour)):\(pad(t.minute)):\(pad(t.second))"
    }

    /// `date` at the next whole second (itself when whole): a time to come never reads sooner
    /// than it is.
    private static func roundedUp(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.up))
    }

    private func fields(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var broken = tm()
        if utc { gmtime_r(&seconds, &broken) } else { localtime_r(&seconds, &broken) }
        return (Int(broken.tm_year) + 1900, Int(broken.tm_mon) + 1, Int(broken.tm_mday),
                Int(broken.tm_hour), Int(broken.tm_min), Int(broken.tm_sec))
    }

    private func pad(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}
