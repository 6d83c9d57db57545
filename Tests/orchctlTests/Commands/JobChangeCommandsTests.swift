import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("cancel, retry, hold, edit, suspend and queue add/remove commands")
struct JobChangeCommandsTests {
    @Test("bad input is a usage error (exit 64) before orchd is asked", arguments: [
        ["cancel"], ["cancel", "3", "--queue", "q"], ["cancel", "--state", "finished"], ["cancel", "--signal", "STOP", "3"],
        ["cancel", "--signal", "", "3"], ["retry"], ["retry", "3", "--failed"], ["retry", "3", "--queue", "q"],
        ["hold"], ["release"], ["edit", "3"], ["edit", "3", "--at", "10:00", "--delay", "1s"], ["edit", "3", "--priority", "x"],
        ["edit", "3", "--delay", "8000y"], ["queue", "set", "q", "--retry-base", "101y"],
        ["suspend"], ["continue", "x"], ["queue", "add"], ["queue", "remove"], ["queue", "add", "bad/name"],
        ["logs", "3", "--both", "--stderr"],
    ])
    func usageErrors(arguments: [String]) {
        let capture = CapturedConsole()
        // No orchd listens at this socket: a usage error must come first.
        #expect(Orchctl.run(["--socket", "/nonexistent/orchd.sock"] + arguments, context: testContext(capture)) == .usage,
                "\(arguments): \(capture.standardError)")
    }

    @Test("retry --failed cut short after some pages reports the refusals received and says the retry was done (exit 69)")
    func retryFailedCutShort() throws {
        let job = makeJob(8, .argv(["true"]), state: .queued)
        let jobs = String(decoding: try JSONEncoder().encode([job]), as: UTF8.self)
        // orchd sends the refusals first, then the jobs, and here stops after one page of each.
        let orchd = try FakeOrchd(replies: [
            #"{"parameters":{"jobs":[],"refused":[{"id":7,"message":"its queue was removed"}]},"continues":true}"#,
            #"{"parameters":{"jobs":"# + jobs + #","refused":[]},"continues":true}"#,
        ])
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", orchd.socketPath, "retry", "--failed"], context: testContext(capture)) == .unavailable)
        let lines = capture.standardError.split(separator: "\n")
        #expect(lines.first == "Error: job 7 not retried: its queue was removed", "\(capture.standardError)")
        #expect(lines.last?.contains("the retry was done, and 1 of its jobs were received, perhaps not all") == true, "\(capture.standardError)")
        let call = try #require(orchd.receivedCalls().first)
        #expect(call.contains(#""more":true"#), "\(call)")
    }

    @Test("cancel says when a job ended on its own before it was cancelled, with its result")
    func cancelOutcome() {
        let cancelled = makeJob(4, .argv(["sleep"]), state: .finished(.cancelled))
        let ended = makeJob(5, .argv(["sh"]), state: .finished(.failed(exitCode: 3)))
        #expect(CancelCommand.outcome(of: JobID(rawValue: 4), in: [cancelled.id: cancelled, ended.id: ended]) == "cancelled 4")
        #expect(CancelCommand.outcome(of: JobID(rawValue: 5), in: [cancelled.id: cancelled, ended.id: ended]) == "5 ended before it was cancelled: failed(3)")
        #expect(CancelCommand.outcome(of: JobID(rawValue: 6), in: [cancelled.id: cancelled, ended.id: ended]) == "cancelled 6")
    }

    @Test("signal names are taken with or without SIG, in any case; STOP and CONT are not cancel signals")
    func signalNames() {
        #expect(JobsInterface.cancelSignal(named: "INT") == 2)
        #expect(JobsInterface.cancelSignal(named: "sigint") == 2)
        #expect(JobsInterface.cancelSignal(named: "Usr1") == 10)
        #expect(JobsInterface.cancelSignal(named: "STOP") == nil)
        #expect(JobsInterface.cancelSignal(named: "CONT") == nil)
        #expect(JobsInterface.cancelSignal(named: "9") == nil)
    }

    @Test("edit's options become Edit's parameters; --delay is resolved against now")
    func editParameters() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let parameters = try EditCommand.parameters(
            try invocation(["edit", "7", "--priority", "-2", "--queue", "io", "--delay", "90s", "--name", ""]), now: now)
        #expect(parameters.id == JobID(rawValue: 7) && parameters.priority == -2 && parameters.queue?.rawValue == "io")
        #expect(parameters.notBefore == Timestamp.format(now.addingTimeInterval(90)))
        #expect(parameters.name == "")
    }

    @Test("a bulk command's summary says how many and which")
    func summary() {
        #expect(BulkText.summary([], verb: "cancelled") == "cancelled no jobs")
        #expect(BulkText.summary([JobID(rawValue: 4)], verb: "retried") == "retried 1 job: 4")
        #expect(BulkText.summary([4, 5, 9].map(JobID.init(rawValue:)), verb: "cancelled") == "cancelled 3 jobs: 4 5 9")
    }
}
