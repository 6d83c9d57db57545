import Testing
import OrchestratorAPI

@Suite("Time spans")
struct TimeSpanTests {
    @Test("systemd spans parse to durations", arguments: [
        ("30", Duration.seconds(30)), ("30s", .seconds(30)), ("5min", .seconds(300)), ("2h", .seconds(7200)),
        ("1d", .seconds(86400)), ("1h30min", .seconds(5400)), ("1h 30min", .seconds(5400)),
        ("500ms", .milliseconds(500)), ("1.5s", .milliseconds(1500)),
    ])
    func parses(text: String, expected: Duration) {
        #expect(TimeSpan.parse(text) == expected)
    }

    @Test("non-spans are refused", arguments: ["", "soon", "5x", "min", "1h-2"])
    func refuses(text: String) {
        #expect(TimeSpan.parse(text) == nil)
    }

    @Test("durations format compactly")
    func formats() {
        #expect(TimeSpan.format(.milliseconds(450)) == "450ms")
        #expect(TimeSpan.format(.milliseconds(1500)) == "1.5s")
        #expect(TimeSpan.format(.seconds(42)) == "42s")
        #expect(TimeSpan.format(.seconds(3723)) == "1h 2min")
        #expect(TimeSpan.format(.seconds(90061)) == "1d 1h")
    }

    @Test("RFC 3339 times parse; impossible dates are refused instead of rolled over")
    func timestamps() {
        #expect(Timestamp.parse("2026-12-01T08:00:00Z") != nil)
        #expect(Timestamp.parse("2028-02-29T00:00:00.5Z") != nil, "a leap day")
        #expect(Timestamp.parse("2026-02-29T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-02-30T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-13-01T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-12-01T24:00:00Z") == nil)
        #expect(Timestamp.parse("tomorrow") == nil)
    }
}
