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
        #expect(StartTime.parse("2026-13-01T08:00:00Z") == nil)
    }

    @Test("a date and time without a zone is local, as systemd.time(7) reads it; a date alone is its midnight", arguments: [
        ("2026-12-01T08:00:00", 2026, 12, 1, 8, 0, 0), ("2026-12-01 08:00", 2026, 12, 1, 8, 0, 0),
        ("2026-12-01 8:05:30", 2026, 12, 1, 8, 5, 30), ("2028-02-29", 2028, 2, 29, 0, 0, 0), ("2026-12-31T23:59", 2026, 12, 31, 23, 59, 0),
    ])
    func localDateTime(text: String, year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        #expect(StartTime.parse(text) == .localDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
    }

    @Test("a local date and time resolves where the zone's clock shows it, past or future")
    func localDateTimeResolves() throws {
        let start = try #require(StartTime.parse("2026-12-01 08:00"))
        #expect(start.resolve(now: now, zone: .fixed(secondsFromGMT: 0)) == Timestamp.parse("2026-12-01T08:00:00Z"))
        #expect(start.resolve(now: now, zone: .fixed(secondsFromGMT: 7_200)) == Timestamp.parse("2026-12-01T06:00:00Z"))
        #expect(start.resolve(now: now, zone: .fixed(secondsFromGMT: -36_000)) == Timestamp.parse("2026-12-01T18:00:00Z"))
        let past = try #require(StartTime.parse("1999-12-31"))
        #expect(past.resolve(now: now, zone: .fixed(secondsFromGMT: 0)) == Timestamp.parse("1999-12-31T00:00:00Z"))
        // The system zone: the local clock reads that date and time at the result.
        var seconds = time_t(start.resolve(now: now, zone: .system).timeIntervalSince1970)
        var fields = tm()
        localtime_r(&seconds, &fields)
        #expect((fields.tm_year + 1900, fields.tm_mon + 1, fields.tm_mday, fields.tm_hour, fields.tm_min) == (2026, 12, 1, 8, 0))
    }

    @Test("a date and time more than a minute past is refused for a job's start, naming it; a time of day never is")
    func pastRefused() throws {
        let utc = LocalTimeZone.fixed(secondsFromGMT: 0)
        let error = #expect(throws: CommandLineError.self) {
            try StartTime.parse("2026-11-28 08:00")!.resolveStart(now: now, zone: utc, command: "submit", startNow: "leave --at out to start the job now")
        }
        #expect(error?.code == .invalidValue)
        #expect(error?.message == "invalid value for option '--at': 2026-11-28 08:00 has passed; give a time to come, or leave --at out to start the job now")
        #expect(throws: CommandLineError.self) {
            try StartTime.parse("2026-11-29T11:58:59Z")!.resolveStart(now: now, zone: utc, command: "submit", startNow: "leave --at out to start the job now")
        }
        // Within the tolerance: taken as is (a script's `date -Iseconds`).
        #expect(try StartTime.parse("2026-11-29T11:59:30Z")!.resolveStart(now: now, zone: utc, command: "submit", startNow: "leave --at out to start the job now")
            == Timestamp.parse("2026-11-29T11:59:30Z"))
        #expect(try StartTime.parse("11:00")!.resolveStart(now: now, zone: utc, command: "submit", startNow: "leave --at out to start the job now")
            == Timestamp.parse("2026-11-30T11:00:00Z"))
    }

    @Test("a start time reads back as --at takes it", arguments: [
        ("2026-12-01 08:00", "2026-12-01 08:00"), ("2026-12-01T8:05:30", "2026-12-01 08:05:30"), ("2028-02-29", "2028-02-29 00:00"), ("0001-01-01", "0001-01-01 00:00"), ("0999-12-31 23:00", "0999-12-31 23:00"),
        ("7:30", "07:30"), ("23:59:59", "23:59:59"), ("2026-12-01T08:00:00+02:00", "2026-12-01T06:00:00Z"), ("2026-12-01T08:00:00.250Z", "2026-12-01T08:00:00.250Z"),
    ])
    func description(text: String, shown: String) throws {
        #expect(try #require(StartTime.parse(text)).description == shown)
        #expect(StartTime.parse(shown) == StartTime.parse(text))
    }

    @Test("impossible or malformed dates are refused", arguments: [
        "2026-02-29", "2026-13-01", "2026-00-10", "2026-12-32", "2026-12-1 08:00", "2026-12-01 25:00", "2026-12-01x08:00",
        "2026-12-01 ", "2026-12-01T", "2026/12/01", "２０２６-12-01", "2026-12-01 08:00:00Z", "2026-12-01T08:00Z", "2026-12-01 08",
    ])
    func refusedDates(text: String) {
        #expect(StartTime.parse(text) == nil)
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
