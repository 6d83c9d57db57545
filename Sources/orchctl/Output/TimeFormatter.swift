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

    /// A short distance from `now`: `5s ago`, `4m ago`, `3h ago`, `2d ago`; a time to come
    /// reads `in 4m`. Whole units, rounded down, except that a time to come counts its
    /// seconds up first, so it never reads sooner than it is: a start 0.4 s ahead is `in 1s`
    /// (not `0s ago`, the look of a start that has happened), 59.5 s ahead `in 1m`.
    func relative(_ date: Date, now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        let magnitude = Int(seconds > 0 ? seconds.rounded(.up) : abs(seconds).rounded(.down))
        let text: String
        switch magnitude {
        case ..<60: text = "\(magnitude)s"
        case ..<3600: text = "\(magnitude / 60)m"
        case ..<86_400: text = "\(magnitude / 3600)h"
        default: text = "\(magnitude / 86_400)d"
        }
        return seconds > 0 ? "in " + text : text + " ago"
    }

    /// A time to come as ``compact(_:now:)`` shows it, rounded up to the whole second: a start
    /// time, which must not read sooner than it is (piped, a retry 0.4 s away would show the
    /// second its previous attempt started in).
    func compactAhead(_ date: Date, now: Date) -> String {
        compact(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.up)), now: now)
    }

    /// A time to come in a message: `04:06:30` today, else `2026-12-03 04:06:30`; rounded up
    /// to the whole second, as ``compactAhead(_:now:)``.
    func clockAhead(_ date: Date, now: Date) -> String {
        let rounded = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.up))
        let (t, n) = (fields(rounded), fields(now))
        guard t.year == n.year && t.month == n.month && t.day == n.day else { return dateTime(rounded) }
        return "\(pad(t.hour)):\(pad(t.minute)):\(pad(t.second))"
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
