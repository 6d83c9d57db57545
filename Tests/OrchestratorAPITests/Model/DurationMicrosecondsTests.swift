import Testing
import OrchestratorAPI

@Suite("Duration and microseconds")
struct DurationMicrosecondsTests {
    @Test("every Int64 count of microseconds survives the round trip", arguments: [
        Int64.min, -1_000_001, -1, 0, 1, 999_999, 1_000_000, 1_790_000_000_123_456, Int64.max,
    ])
    func roundTrip(microseconds: Int64) {
        #expect(Duration(microseconds: microseconds).microseconds == microseconds)
    }

    @Test("a fraction of a microsecond is cut toward zero")
    func truncates() {
        #expect(Duration.nanoseconds(1_999).microseconds == 1)
        #expect(Duration.nanoseconds(-1_999).microseconds == -1)
        #expect(Duration.nanoseconds(999).microseconds == 0)
    }

    @Test("spans beyond Int64 microseconds saturate instead of trapping")
    func saturates() {
        #expect(Duration.seconds(Int64.max).microseconds == .max)
        #expect(Duration.seconds(Int64.min).microseconds == .min)
        #expect((Duration(microseconds: .max) + .microseconds(1)).microseconds == .max)
        #expect((Duration(microseconds: .min) - .microseconds(1)).microseconds == .min)
    }

    @Test("seconds as a Double for Date arithmetic")
    func timeInterval() {
        #expect(Duration.milliseconds(1_500).timeInterval == 1.5)
        #expect(Duration(microseconds: -250_000).timeInterval == -0.25)
    }
}
