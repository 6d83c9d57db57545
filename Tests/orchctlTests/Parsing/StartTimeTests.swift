import CommandLineParsing
import FoundationEssentials
import Glibc
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("--at start times")
struct StartTimeTests {
    /// 2026-11-29T12:00:00Z, a Sunday.
    let now = referenceDate

    @Test("RFC 3339 with Z or an offset is an instant")
    func rfc3339() {
        #expect(StartTime.parse("2026-12-01T08:00:00Z") == .instant(Timestamp.parse("2026-12-01T08:00:00Z")!))
        #expect(StartTime.parse("2026-12-01T08:00:00+02:00")?.resolve(now: now) == Timestamp.parse("2026-12-01T06:00:00Z"))
        #expect(StartTime.parse("2026-12-01T08:00:00-05:30")?.resolve(now: now) == Timestamp.parse("2026-12-01T13:30:00Z"))
        #expect(StartTime.parse("2026-12-01T08:00:00.250Z") != nil)
        #expect(StartTime.parse("2026-12-01T08:00:00") == nil)
        #expect(StartTime.parse("2026-13-01T08:00:00Z") == nil)
    }

    @Test("HH:MM and HH:MM:SS are local times of day", arguments: [
        ("08:00", 8, 0, 0), ("8:05", 8, 5, 0), ("23:59:59", 23, 59, 59), ("00:00", 0, 0, 0),
    ])
    func timeOfDay(text: String, hour: Int, minute: Int, second: Int) {
        #expect(StartTime.parse(text) == .timeOfDay(hour: hour, minute: minute, second: second))
    }

    @Test("impossible or malformed times are refused", arguments: ["25:00", "24:00", "12:60", "12:00:60", "12", "12:5", "123:00", "-1:00", "noon", "", "1:2:3:4", "١٢:٠٠"])
    func refused(text: String) {
        #expect(StartTime.parse(text) == nil)
    }

    @Test("a time still ahead today is today; one passed (or now) is tomorrow, in the given zone")
    func nextOccurrence() {
        let utc = LocalTimeZone.fixed(secondsFromGMT: 0)
        #expect(StartTime.timeOfDay(hour: 13, minute: 0, second: 0).resolve(now: now, zone: utc) == Timestamp.parse("2026-11-29T13:00:00Z"))
        #expect(StartTime.timeOfDay(hour: 8, minute: 0, second: 0).resolve(now: now, zone: utc) == Timestamp.parse("2026-11-30T08:00:00Z"))
        #expect(StartTime.timeOfDay(hour: 12, minute: 0, second: 0).resolve(now: now, zone: utc) == Timestamp.parse("2026-11-30T12:00:00Z"))
        // At 12:00Z it is 14:00 in UTC+2: 13:00 local has passed, 15:00 local has not.
        let plusTwo = LocalTimeZone.fixed(secondsFromGMT: 7_200)
        #expect(StartTime.timeOfDay(hour: 13, minute: 0, second: 0).resolve(now: now, zone: plusTwo) == Timestamp.parse("2026-11-30T11:00:00Z"))
        #expect(StartTime.timeOfDay(hour: 15, minute: 0, second: 0).resolve(now: now, zone: plusTwo) == Timestamp.parse("2026-11-29T13:00:00Z"))
        // At 12:00Z it is 02:00 on the same day in UTC-10; the day boundary is the local one.
        let minusTen = LocalTimeZone.fixed(secondsFromGMT: -36_000)
        #expect(StartTime.timeOfDay(hour: 1, minute: 0, second: 0).resolve(now: now, zone: minusTen) == Timestamp.parse("2026-11-30T11:00:00Z"))
        #expect(StartTime.timeOfDay(hour: 23, minute: 30, second: 0).resolve(now: now, zone: minusTen) == Timestamp.parse("2026-11-30T09:30:00Z"))
    }

    @Test("in the system zone the result is within a day and the local clock reads the time there")
    func systemZone() {
        let start = StartTime.timeOfDay(hour: 7, minute: 45, second: 30)
        let resolved = start.resolve(now: now, zone: .system)
        #expect(resolved > now)
        #expect(resolved.timeIntervalSince(now) <= 86_400 + 3_600)
        var seconds = time_t(resolved.timeIntervalSince1970)
        var fields = tm()
        localtime_r(&seconds, &fields)
        #expect((fields.tm_hour, fields.tm_min, fields.tm_sec) == (7, 45, 30))
    }
}
