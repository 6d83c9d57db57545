import FoundationEssentials
import OrchestratorAPI
import Testing

@Suite("Timestamps")
struct TimestampTests {
    /// The format style the hand-written code replaced, as the oracle.
    private let reference = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    @Test("formatting agrees with ISO8601FormatStyle, to the millisecond, across eras and leap days")
    func formatMatchesFormatStyle() {
        // Fractions a Double holds exactly, so the style's own rounding does not differ.
        let instants: [Double] = [
            0, 0.5, 0.25, 59.5, 86_399.875, 951_782_400, 951_868_799.5, 1_790_000_000.125, 4_102_444_800,
            -1, -86_400.25, 253_402_300_799.5, 1_709_164_800, 1_735_689_599.75,
        ]
        for seconds in instants {
            #expect(Timestamp.format(Date(timeIntervalSince1970: seconds)) == Date(timeIntervalSince1970: seconds).formatted(reference), "\(seconds)")
        }
        // Milliseconds are truncated, and not lost to the binary fraction (the style showed .122).
        #expect(Timestamp.format(Timestamp.date(microseconds: 1_790_000_000_123_456)) == "2026-09-21T14:13:20.123Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1_735_689_599.9994)) == "2024-12-31T23:59:59.999Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.0004)) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.0006)) == "1969-12-31T23:59:59.999Z")
    }

    @Test("a timestamp read back prints the same text, for every millisecond of a second")
    func roundTripsEveryMillisecond() throws {
        for millisecond in 0..<1000 {
            let text = "2026-11-30T21:25:51." + String(String(millisecond + 1000).dropFirst()) + "Z"
            let parsed = try #require(Timestamp.parse(text))
            #expect(Timestamp.format(parsed) == text)
        }
    }

    @Test("parsing agrees with ISO8601FormatStyle: fractions, Z and offsets; and round-trips format")
    func parseMatchesFormatStyle() throws {
        let texts = [
            "2026-11-29T12:14:43.123Z", "2026-11-29T12:14:43Z", "2028-02-29T23:59:59.5Z", "1970-01-01T00:00:00Z",
            "2026-12-01T08:00:00+02:00", "2026-12-01T08:00:00-05:30", "1969-12-31T23:59:59.750Z", "2000-03-01T00:00:00.001Z",
        ]
        for text in texts {
            let parsed = try #require(Timestamp.parse(text), "\(text)")
            let expected = try (try? reference.parse(text)) ?? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text)
            #expect(abs(parsed.timeIntervalSince1970 - expected.timeIntervalSince1970) < 0.000_5, "\(text)")
            #expect(Timestamp.parse(Timestamp.format(parsed)).map(Timestamp.format) == Timestamp.format(parsed))
        }
        for bad in ["2026-11-29T12:14:43", "2026-11-29T12:14:43.Z", "2026-11-29T12:14:43+2", "2026-11-29T12:14:43Zjunk",
                    "2026-11-29 12:14:43Z", "2026-11-29T12:14:43+24:00"] {
            #expect(Timestamp.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("only times with a four-digit UTC year are read, and a time past them is written clamped, never as another shape or a trap")
    func fourDigitYears() throws {
        for outside in ["0000-01-01T00:00:00+23:59", "0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"] {
            #expect(Timestamp.parse(outside) == nil, "\(outside)")
        }
        for inside in ["0000-01-01T00:00:00Z", "0000-01-01T00:00:00-01:00", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59+01:00"] {
            let parsed = try #require(Timestamp.parse(inside), "\(inside)")
            #expect(Timestamp.parse(Timestamp.format(parsed)) != nil, "\(inside)")
        }
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1e15)) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -1e15)) == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.format(Timestamp.date(microseconds: .max)) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.microseconds(Date(timeIntervalSince1970: 1e300)) == .max)
        #expect(Timestamp.microseconds(Date(timeIntervalSince1970: -1e300)) == .min)
    }
}
