import FoundationEssentials
import OrchestratorAPI
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import orchctl

@Suite("logs command")
struct LogsCommandTests {
    /// A `Logs` reply carrying `text`, ending at `offset`.
    private func reply(_ text: String, offset: Int, continues: Bool) -> String {
        let data = Data(text.utf8).base64EncodedString()
        return #"{"# + (continues ? #""continues":true,"# : "") + #""parameters":{"data":"\#(data)","offset":\#(offset)}}"#
    }

    @Test("--stderr, --follow (or -f) and --tail become Logs' parameters; absent ones are left out")
    func parameters() throws {
        let all = LogsCommand.parameters(try invocation(["logs", "7", "--stderr", "--follow", "--tail", "20"]))
        #expect(all.id == JobID(rawValue: 7))
        #expect(all.stream == .stderr)
        #expect(all.follow == true)
        #expect(all.tailLines == 20)
        #expect(all.offset == nil)
        #expect(LogsCommand.parameters(try invocation(["logs", "-f", "7"])).follow == true)
        #expect(LogsCommand.parameters(try invocation(["logs", "7", "--tail=0"])).tailLines == 0)
        let none = LogsCommand.parameters(try invocation(["logs", "7"]))
        #expect(none.stream == .stdout && none.follow == nil && none.tailLines == nil)
        let json = String(decoding: try JSONEncoder().encode(none), as: UTF8.self)
        #expect(!json.contains("follow") && !json.contains("tailLines") && !json.contains("offset"))
    }

    @Test("a --tail that is not a whole number of at least 0 is a usage error (exit 64)")
    func badTail() {
        #expect(parseError(["logs", "7", "--tail", "-1"])?.message == "invalid value for option '--tail': '-1' is not a whole number of at least 0")
        #expect(parseError(["logs", "7", "--tail", "abc"])?.code == .invalidValue)
        // A whole number past what orchctl holds is too large, not malformed.
        #expect(parseError(["logs", "7", "--tail", "99999999999999999999"])?.message
            == "invalid value for option '--tail': '99999999999999999999' is too large: at most \(Int.max)")
        #expect(parseError(["logs", "7", "--tail", "1.5"])?.code == .invalidValue)
        #expect(parseError(["logs", "7", "--tail"])?.code == .missingValue)
        #expect(parseError(["logs", "7", "-x"])?.code == .unknownOption)
        #expect(parseError(["-f", "logs", "7"])?.code == .unknownOption)
        #expect(parseError(["logs", "7", "--follow=yes"])?.code == .unexpectedValue)
        let capture = CapturedConsole()
        #expect(Orchctl.run(["logs", "7", "--tail", "x"], context: testContext(capture)) == .usage)
        #expect(capture.standardError.hasSuffix("Usage: orchctl logs <id> [--stderr | --both] [--attempt <n>] [--follow] [--tail <lines>]\nSee 'orchctl logs --help'.\n"))
    }

    @Test("logs writes each chunk's bytes unchanged, in order, and sends the options")
    func chunks() throws {
        let orchd = try FakeOrchd(replies: [
            reply("one\n", offset: 4, continues: true), reply("", offset: 4, continues: true),
            reply("two\n", offset: 8, continues: true), reply("", offset: 8, continues: false),
        ])
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", orchd.socketPath, "logs", "7", "--tail", "2", "--stderr"], context: testContext(capture)) == .success)
        #expect(capture.standardOutput == "one\ntwo\n")
        #expect(capture.standardError.isEmpty)
        let call = try #require(orchd.receivedCalls().first)
        #expect(call.contains(#""method":"io.orchd.Jobs.Logs""#) && call.contains(#""more":true"#))
        #expect(call.contains(#""tailLines":2"#) && call.contains(#""stream":"stderr""#))
    }

    @Test("when the reader of the output goes away (EPIPE), --follow stops quietly with exit 0")
    func readerGone() throws {
        let replies = (1...5).map { reply("line \($0)\n", offset: 7 * $0, continues: true) }
        // The stream never ends by itself: the connection stays open after five chunks.
        let orchd = try FakeOrchd(replies: replies, keepOpen: true)
        let chunks = Mutex<[String]>([])
        let error = CapturedConsole()
        var context = testContext(error)
        context.console = Console(
            writeOutput: { _ in }, writeError: error.console.writeError, outputIsTerminal: false, terminalColumns: nil,
            writeOutputChecked: { bytes in
                chunks.withLock { written in
                    guard written.count < 2 else { return EPIPE }
                    written.append(String(decoding: bytes, as: UTF8.self))
                    return 0
                }
            })
        #expect(Orchctl.run(["--socket", orchd.socketPath, "logs", "-f", "7"], context: context) == .success)
        #expect(chunks.withLock { $0 } == ["line 1\n", "line 2\n"])
        #expect(error.standardError.isEmpty)
    }

    @Test("a reply whose data is not base64 is a failure")
    func notBase64() throws {
        let orchd = try FakeOrchd(replies: [#"{"parameters":{"data":"***","offset":3}}"#])
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", orchd.socketPath, "logs", "7"], context: testContext(capture)) == .failure)
        #expect(capture.standardError == "Error: orchd sent log data that is not base64\n")
    }

    @Test("--both on a terminal puts each stream under a header when the stream changes; piped, no headers")
    func interleavedHeaders() {
        let capture = CapturedConsole()
        let output = LogsCommand.InterleavedOutput(console: capture.console, headers: true)
        #expect(output.write(Array("a\nb".utf8), from: .stdout) == 0)
        #expect(output.write(Array("oops\n".utf8), from: .stderr) == 0)
        #expect(output.write(Array("c\n".utf8), from: .stdout) == 0)
        #expect(capture.standardOutput == "==> stdout <==\na\nb\n\n==> stderr <==\noops\n\n==> stdout <==\nc\n")
        let piped = CapturedConsole()
        let plain = LogsCommand.InterleavedOutput(console: piped.console, headers: false)
        plain.begin(.stdout)
        _ = plain.write(Array("a".utf8), from: .stdout)
        plain.begin(.stderr)
        _ = plain.write(Array("b\n".utf8), from: .stderr)
        #expect(piped.standardOutput == "ab\n")
    }

    @Test("--both on a terminal prints no header for a job orchd does not have: the error comes alone")
    func bothForAMissingJob() throws {
        let orchd = try FakeOrchd(replies: [#"{"error":"io.orchd.Jobs.NoSuchJob","parameters":{"id":9999,"message":"no job with ID 9999"}}"#])
        let capture = CapturedConsole()
        var context = testContext(capture)
        context.console.outputIsTerminal = true
        #expect(Orchctl.run(["--socket", orchd.socketPath, "logs", "--both", "9999"], context: context) == .failure)
        #expect(capture.standardOutput == "")
        #expect(capture.standardError == "Error: no job with ID 9999\n")
    }

    @Test("--attempt becomes Logs' attempt; 0 or less is a usage error")
    func attemptOption() throws {
        #expect(LogsCommand.parameters(try invocation(["logs", "7", "--attempt", "2"])).attempt == 2)
        #expect(LogsCommand.parameters(try invocation(["logs", "7"])).attempt == nil)
        #expect(parseError(["logs", "7", "--attempt", "0"])?.code == .invalidValue)
        #expect(parseError(["logs", "7", "--attempt", "-1"])?.code == .invalidValue)
    }
}
