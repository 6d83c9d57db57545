import FoundationEssentials
import Testing

@testable import OrchestratorAPI

@Suite("Events written and read without the Codable coders agree with them")
struct EventJSONBytesTests {
    static let events: [Event] = {
        var events: [Event] = [
            Event(seq: 1, at: Date(timeIntervalSince1970: 0), kind: .daemonReady),
            Event(
                seq: Int64.max, at: Date(timeIntervalSince1970: 1_795_000_000.125), kind: .finished, jobId: JobID(rawValue: Int64.max),
                queue: QueueName(rawValue: "builds")!, state: "finished", previousState: "running", result: "failed",
                exitCode: Int32.min, signal: Int32.max, attempt: Int.max, ownerUid: UInt32.max),
            Event(seq: 0, at: Date(timeIntervalSince1970: -1), kind: "a_kind_from_a_newer_daemon", jobId: JobID(rawValue: -5), attempt: 0),
        ]
        for text in JobJSONSamples.hostileStrings {
            events.append(Event(
                seq: 7, at: Date(timeIntervalSince1970: 1_795_000_001), kind: EventKind(rawValue: text), state: text, previousState: text,
                result: text))
        }
        return events
    }()

    @Test("an event writes the bytes JSONEncoder writes with sorted keys and plain slashes", arguments: events)
    func written(event: Event) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: event.jsonBytes, as: UTF8.self) == String(decoding: try encoder.encode(event), as: UTF8.self))
    }

    @Test("an event is read back to itself, and altered ones as JSONDecoder reads them, or left to it", arguments: events)
    func read(event: Event) throws {
        let text = String(decoding: event.jsonBytes, as: UTF8.self)
        #expect(JobReadTests.fast(text, Event.read) == (try JSONDecoder().decode(Event.self, from: Data(text.utf8))))
        let members = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
        for key in members.keys.sorted() {
            for value in [nil, JSONValue.null, .bool(true), .number(1), .number(-1), .number(4_294_967_296), .string("x"),
                          .string("2026-12-02T08:00:00Z"), .string("bad queue!"), .array([]), .object([:])] as [JSONValue?] {
                var altered = members
                altered[key] = value
                let alteredText = try String(decoding: JSONEncoder().encode(altered), as: UTF8.self)
                JobReadTests.expectAgreement(alteredText, Event.read)
            }
        }
    }

    @Test("a Subscribe reply: an event, none, or left to JSONDecoder", arguments: [
        #"{"event":null}"#, "{}", #"{"other":1}"#, #"{"event":{}}"#, #"{"event":[]}"#, #"{"event":null,"event":null}"#,
        #"{"event":{"seq":3,"at":"2026-12-02T08:00:00.000Z","kind":"started","jobId":4}}"#,
    ])
    func reply(text: String) {
        let codable = try? JSONDecoder().decode(JobsInterface.EventReply.self, from: Data(text.utf8))
        let fast = JobReadTests.fast(text, JobsInterface.EventReply.read)
        if let fast { #expect(fast.event == codable?.event && codable != nil, "\(text)") }
        if codable == nil { #expect(fast == nil, "\(text)") }
        if text.contains(#""seq":3"#) { #expect(fast?.event?.jobId == JobID(rawValue: 4)) }
    }
}
