import FoundationEssentials
import OrchestratorAPI
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import orchctl

@Suite("events command")
struct EventsCommandTests {
    /// A `started` event of job 7, at the reference date.
    let started = Event(seq: 41, at: referenceDate, kind: "started", jobId: JobID(rawValue: 7), queue: QueueName(rawValue: "builds"),
                        state: "running", previousState: "queued", attempt: 1)

    @Test("an event is one line of compact JSON with sorted keys, nulls kept, slashes plain")
    func line() throws {
        var event = started
        event.kind = "finished"
        event.result = "failed/odd"
        event.exitCode = 3
        let text = try EventLine().text(event)
        #expect(text == #"{"at":"2026-11-29T12:00:00.000Z","attempt":1,"exitCode":3,"jobId":7,"kind":"finished","ownerUid":null,"previousState":"queued","queue":"builds","result":"failed/odd","seq":41,"signal":null,"state":"running"}"# + "\n")
        #expect(text.filter { $0 == "\n" }.count == 1)
        // It reads back as the same event.
        #expect(try JSONDecoder().decode(Event.self, from: Data(text.utf8)) == event)
    }

    @Test("a newline inside a field is escaped, so a line stays one event")
    func lineEscapes() throws {
        let event = Event(seq: 1, at: referenceDate, kind: "daemon_ready\nx")
        let text = try EventLine().text(event)
        #expect(text.hasSuffix("}\n"))
        #expect(text.dropLast().contains("\n") == false)
        #expect(text.contains(#""kind":"daemon_ready\nx""#))
    }

    @Test("--since, --follow, --queue and --job become Subscribe's parameters; absent ones are left out")
    func parameters() throws {
        let all = EventsCommand.parameters(try invocation(["events", "--since", "120", "--follow", "--queue", "builds", "--job", "7"]))
        #expect(all.since == 120)
        #expect(all.follow == true)
        #expect(all.queue == QueueName(rawValue: "builds"))
        #expect(all.jobId == JobID(rawValue: 7))
        let none = EventsCommand.parameters(try invocation(["events"]))
        #expect(none.since == nil && none.follow == nil && none.queue == nil && none.jobId == nil)
        #expect(String(decoding: try JSONEncoder().encode(none), as: UTF8.self) == "{}")
        // The global --json is accepted anywhere and changes nothing.
        #expect(try invocation(["events", "--json"]).global.json)
        #expect(EventsCommand.Options(decoding: try invocation(["--json", "events", "--follow"])).follow)
    }

    @Test("a bad sequence number, queue or job ID is a usage error")
    func badValues() {
        #expect(parseError(["events", "--since", "abc"])?.message == "invalid value for option '--since': 'abc' is not a whole number of at least 0")
        #expect(parseError(["events", "--since", "-1"])?.code == .invalidValue)
        #expect(parseError(["events", "--since", "1.5"])?.code == .invalidValue)
        #expect(parseError(["events", "--since"])?.code == .missingValue)
        #expect(parseError(["events", "--job", "0"])?.code == .invalidValue)
        #expect(parseError(["events", "--queue", "no/slash"])?.code == .invalidValue)
        #expect(parseError(["events", "--follow=yes"])?.code == .unexpectedValue)
        #expect(parseError(["events", "7"])?.code == .unexpectedArgument)
        let capture = CapturedConsole()
        #expect(Orchctl.run(["events", "--since", "abc"], context: testContext(capture)) == .usage)
        #expect(capture.standardError.hasSuffix("Usage: orchctl events [--since <seq>] [--follow] [--queue <queue>] [--job <id>]\nSee 'orchctl events --help'.\n"))
    }

    @Test("events prints the backlog, one line per event, and sends the filters")
    func backlog() throws {
        let first = String(decoding: try JSONEncoder().encode(JobsInterface.EventReply(event: started)), as: UTF8.self)
        var finished = started
        finished.seq = 42
        finished.kind = "finished"
        let second = String(decoding: try JSONEncoder().encode(JobsInterface.EventReply(event: finished)), as: UTF8.self)
        let orchd = try FakeOrchd(replies: [#"{"continues":true,"parameters":"# + first + "}", #"{"parameters":"# + second + "}"])
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", orchd.socketPath, "events", "--since", "40", "--job", "7"], context: testContext(capture)) == .success)
        #expect(capture.standardOutput == (try EventLine().text(started)) + (try EventLine().text(finished)))
        #expect(capture.standardError.isEmpty)
        let call = try #require(orchd.receivedCalls().first)
        #expect(call.contains(#""method":"io.orchd.Jobs.Subscribe""#))
        #expect(call.contains(#""more":true"#))
        #expect(call.contains(#""since":40"#) && call.contains(#""jobId":7"#))
    }

    @Test("an empty backlog (one reply without an event) prints nothing and exits 0")
    func emptyBacklog() throws {
        let orchd = try FakeOrchd(replies: [#"{"parameters":{"event":null}}"#])
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", orchd.socketPath, "events"], context: testContext(capture)) == .success)
        #expect(capture.standardOutput.isEmpty)
        #expect(capture.standardError.isEmpty)
    }

    @Test("when the reader of the output goes away (EPIPE), the stream stops quietly with exit 0")
    func readerGone() throws {
        let replies = try (1...5).map { seq in
            var event = started
            event.seq = Int64(seq)
            return #"{"continues":true,"parameters":"# + String(decoding: try JSONEncoder().encode(JobsInterface.EventReply(event: event)), as: UTF8.self) + "}"
        }
        // The stream never ends by itself: the connection stays open after five events.
        let orchd = try FakeOrchd(replies: replies, keepOpen: true)
        let lines = Mutex<[String]>([])
        let error = CapturedConsole()
        let console = Console(
            writeOutput: { _ in }, writeError: error.console.writeError, outputIsTerminal: false, terminalColumns: nil,
            writeOutputChecked: { bytes in
                lines.withLock { written in
                    guard written.count < 2 else { return EPIPE }
                    written.append(String(decoding: bytes, as: UTF8.self))
                    return 0
                }
            })
        var context = testContext(error)
        context.console = console
        #expect(Orchctl.run(["--socket", orchd.socketPath, "events", "--follow"], context: context) == .success)
        #expect(lines.withLock { $0.count } == 2)
        #expect(error.standardError.isEmpty)
    }

    @Test("a write error other than EPIPE is reported")
    func writeError() throws {
        let reply = #"{"parameters":"# + String(decoding: try JSONEncoder().encode(JobsInterface.EventReply(event: started)), as: UTF8.self) + "}"
        let orchd = try FakeOrchd(replies: [reply])
        let capture = CapturedConsole()
        var context = testContext(capture)
        context.console = Console(
            writeOutput: { _ in }, writeError: capture.console.writeError, outputIsTerminal: false, terminalColumns: nil,
            writeOutputChecked: { _ in ENOSPC })
        #expect(Orchctl.run(["--socket", orchd.socketPath, "events"], context: context) == .failure)
        #expect(capture.standardError == "Error: cannot write to standard output: No space left on device\n")
    }

    @Test("events with no daemon exits 69")
    func noDaemon() {
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", "/nonexistent/orchd.sock", "events", "--follow"], context: testContext(capture)) == .unavailable)
        #expect(capture.standardOutput.isEmpty)
    }
}
