import Testing
import OrchestratorAPI

@Suite("Time spans")
struct TimeSpanTests {
    @Test("systemd spans parse to durations", arguments: [
        ("30", Duration.seconds(30)), ("30s", .seconds(30)), ("5min", .seconds(300)), ("2h", .seconds(7200)),
        ("1d", .seconds(86400)), ("1h30min", .seconds(5400)), ("1h 30min", .seconds(5400)),
        ("500ms", .milliseconds(500)), ("1.5s", .milliseconds(1500)), ("90s", .seconds(90)),
        ("1.5h", .seconds(5400)), ("2 days", .seconds(172_800)), ("5min 30s", .seconds(330)),
        ("  7d ", .seconds(604_800)), ("0", .zero), ("1.5", .milliseconds(1500)), ("2weeks", .seconds(1_209_600)),
        ("1M", .seconds(2_629_800)), ("1y", .seconds(31_557_600)), ("250us", .microseconds(250)),
        ("3µs", .microseconds(3)), ("1 hour 2 minutes 3 seconds", .seconds(3723)), ("1h1h", .seconds(7200)),
    ])
    func parses(text: String, expected: Duration) throws {
        #expect(TimeSpan.parse(text) == expected)
        #expect(try TimeSpan.parseMicroseconds(text) == Int64(expected.components.seconds) * 1_000_000
            + expected.components.attoseconds / 1_000_000_000_000)
    }

    @Test("non-spans are refused with a message saying why", arguments: [
        ("", "a time span cannot be empty (e.g. 30s, 5min, 1h30min)"),
        ("   ", "a time span cannot be empty (e.g. 30s, 5min, 1h30min)"),
        ("-1s", "'-1s' is negative; a time span cannot be negative"),
        ("-5", "'-5' is negative; a time span cannot be negative"),
        ("1h -5min", "'1h -5min' is negative; a time span cannot be negative"),
        ("1h-2", "'1h-2' is negative; a time span cannot be negative"),
        ("1h30", "'1h30' is ambiguous: the number 30 has no unit; give every number its unit (e.g. 1h30min, not 1h30)"),
        ("1h 30", "'1h 30' is ambiguous: the number 30 has no unit; give every number its unit (e.g. 1h30min, not 1h30)"),
        ("30 5min", "'30 5min' is ambiguous: the number 30 has no unit; give every number its unit (e.g. 1h30min, not 1h30)"),
        ("1.5h 2", "'1.5h 2' is ambiguous: the number 2 has no unit; give every number its unit (e.g. 1h30min, not 1h30)"),
        ("soon", "'soon' is not a time span: expected a number at 'soon' (e.g. 30s, 5min, 1h30min)"),
        ("min", "'min' is not a time span: expected a number at 'min' (e.g. 30s, 5min, 1h30min)"),
        ("5x", "'5x' is not a time span: unknown unit 'x' (units: us, ms, s, min, h, d, w, M, y)"),
        ("5 mins", "'5 mins' is not a time span: unknown unit 'mins' (units: us, ms, s, min, h, d, w, M, y)"),
        ("1e5s", "'1e5s' is not a time span: unknown unit 'e' (units: us, ms, s, min, h, d, w, M, y)"),
        ("1..5h", "'1..5h' is not a time span: '1..5' is not a number"),
        ("1.2.3s", "'1.2.3s' is not a time span: '1.2.3' is not a number"),
        (".", "'.' is not a time span: '.' is not a number"),
        ("5s!", "'5s!' is not a time span: expected a number at '!' (e.g. 30s, 5min, 1h30min)"),
        ("5!", "'5!' is not a time span: unexpected '!'"),
        ("+5s", "'+5s' is not a time span: expected a number at '+5s' (e.g. 30s, 5min, 1h30min)"),
        ("٣s", "'٣s' is not a time span: expected a number at '٣s' (e.g. 30s, 5min, 1h30min)"),
        ("999999999y", "'999999999y' is too long for a time span (at most about 292,000 years)"),
    ])
    func refuses(text: String, message: String) {
        #expect(TimeSpan.parse(text) == nil)
        #expect(throws: TimeSpan.Invalid(message: message)) { try TimeSpan.parseMicroseconds(text) }
    }

    @Test("durations format compactly")
    func formats() {
        #expect(TimeSpan.format(.milliseconds(450)) == "450ms")
        #expect(TimeSpan.format(.microseconds(400)) == "400us")
        #expect(TimeSpan.format(.microseconds(1500)) == "1.5ms")
        #expect(TimeSpan.format(.microseconds(1050)) == "1ms")
        #expect(TimeSpan.format(.microseconds(16_400)) == "16ms")
        #expect(TimeSpan.format(.nanoseconds(500)) == "0ms")
        #expect(TimeSpan.format(.zero) == "0ms")
        #expect(TimeSpan.format(.milliseconds(-5)) == "0ms")
        for text in ["400us", "1.5ms", "450ms", "1.5s"] {
            #expect(TimeSpan.parse(text).map(TimeSpan.format) == text, "what is shown can be given back")
        }
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
