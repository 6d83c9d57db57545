import CommandLineParsing
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("wait command")
struct WaitCommandTests {
    @Test("wait takes job IDs, --all, or --queue Q --drained")
    func targets() throws {
        #expect(try WaitCommand.target(of: invocation(["wait", "3", "4"])) == .jobs([JobID(rawValue: 3), JobID(rawValue: 4)]))
        #expect(try WaitCommand.target(of: invocation(["wait", "--all"])) == .all)
        #expect(try WaitCommand.target(of: invocation(["wait", "--queue", "builds", "--drained"])) == .drainedQueue(QueueName(rawValue: "builds")!))
        #expect(try WaitCommand.target(of: invocation(["wait", "--drained", "--queue=builds", "--timeout", "5min"])) == .drainedQueue(QueueName(rawValue: "builds")!))
    }

    @Test("--queue without --drained, and --drained without --queue, are usage errors that say what is missing")
    func queueAndDrainedGoTogether() throws {
        let noDrained = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(["wait", "--queue", "builds"])) }
        #expect(noDrained?.message == "--queue needs --drained: 'wait --queue <queue> --drained' waits until the queue is empty")
        #expect(noDrained?.command == "wait")
        let noQueue = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(["wait", "--drained"])) }
        #expect(noQueue?.message == "--drained needs the queue to wait for: --queue <queue>")

        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", "/nonexistent", "wait", "--queue", "builds"], context: testContext(capture)) == .usage)
        #expect(capture.standardError == """
            Error: --queue needs --drained: 'wait --queue <queue> --drained' waits until the queue is empty
            Usage: orchctl wait (<id> ... | --all | --queue <queue> --drained) [--timeout <span>]
            See 'orchctl wait --help'.

            """)
    }

    @Test("IDs, --all and --queue --drained exclude each other; one of them is needed")
    func exclusive() throws {
        for arguments in [["wait", "3", "--all"], ["wait", "3", "--queue", "q", "--drained"], ["wait", "--all", "--queue", "q", "--drained"]] {
            let error = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(arguments)) }
            #expect(error?.code == .conflictingOptions, "\(arguments)")
            #expect(error?.message == "give one of job IDs, --all or --queue <queue> --drained")
        }
        let none = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(["wait"])) }
        #expect(none?.code == .missingArgument)
        #expect(none?.message == "missing argument '<id>' (or --all, or --queue <queue> --drained)")
        #expect(parseError(["wait", "--queue", "bad name!", "--drained"])?.code == .invalidValue)
        #expect(parseError(["wait", "--queue", "q", "--drained=yes"])?.code == .unexpectedValue)
    }

    /// An awaited job as `List` describes it: `state`, and a start `seconds` after ``referenceDate``.
    private func start(_ id: Int64, _ state: JobState = .waiting, in seconds: Double?) -> JobsInterface.JobStartsReply.JobStart {
        .init(id: JobID(rawValue: id), state: state.name, notBefore: seconds.map { referenceDate.addingTimeInterval($0) })
    }

    private func note(_ starts: [JobsInterface.JobStartsReply.JobStart]) -> String {
        let capture = CapturedConsole()
        WaitCommand.noteLateStarts(starts, now: referenceDate, time: TimeFormatter(utc: true), console: capture.console)
        #expect(capture.standardOutput.isEmpty)
        return capture.standardError
    }

    @Test("as a wait begins, each awaited job that may not start for more than a minute is named on standard error with when it may start")
    func lateStarts() {
        // A job delayed by 2h, asked about a moment later, is 'in 2h'; one tomorrow shows its date.
        #expect(note([start(5, in: 7_199.6), start(6, in: 61), start(7, in: 86_400 + 3_600)]) == """
            orchctl: waiting for job 5, which may start no sooner than 14:00:00 (in 2h)
            orchctl: waiting for job 6, which may start no sooner than 12:01:01 (in 1min)
            orchctl: waiting for job 7, which may start no sooner than 2026-11-30 13:00:00 (in 1d 1h)

            """)
    }

    @Test("nothing for a job that may start within a minute, has no start time, or is not waiting (queued, running, finished, cancelled before its start)")
    func noLateStarts() {
        #expect(note([
            start(1, in: 60), start(2, in: 5), start(3, in: -30), start(4, in: nil), start(5, .queued, in: 3_600),
            start(6, .running, in: 3_600), start(7, .finished(.cancelled), in: 3_600),
        ]).isEmpty)
        #expect(note([]).isEmpty)
    }

    @Test("a held job, waiting or queued, is named first with how to release it; its start time is not")
    func heldJobs() {
        var delayedAndHeld = start(9, in: 7_200)
        delayedAndHeld.held = true
        var queuedHeld = start(4, .queued, in: nil)
        queuedHeld.held = true
        var finishedHeld = start(2, .finished(.cancelled), in: nil)
        finishedHeld.held = true
        #expect(note([start(5, in: 7_200), delayedAndHeld, queuedHeld, finishedHeld]) == """
            orchctl: waiting for job 4, which is held: it starts only once released ('orchctl release 4')
            orchctl: waiting for job 9, which is held: it starts only once released ('orchctl release 9')
            orchctl: waiting for job 5, which may start no sooner than 14:00:00 (in 2h)

            """)
        let many = (1...7).map { id -> JobsInterface.JobStartsReply.JobStart in
            var job = start(Int64(id), .queued, in: nil)
            job.held = true
            return job
        }
        #expect(note(many).split(separator: "\n").last == "orchctl: and for 3 more held jobs")
        #expect(note(many).split(separator: "\n").count == 5)
    }

    @Test("many late jobs: at most five lines, in ID order, the last counting the rest with the soonest start among them")
    func manyLateStarts() {
        let starts = (1...12).reversed().map { start(Int64($0), in: 3_600 + Double($0) * 60) }
        #expect(note(starts) == """
            orchctl: waiting for job 1, which may start no sooner than 13:01:00 (in 1h 1min)
            orchctl: waiting for job 2, which may start no sooner than 13:02:00 (in 1h 2min)
            orchctl: waiting for job 3, which may start no sooner than 13:03:00 (in 1h 3min)
            orchctl: waiting for job 4, which may start no sooner than 13:04:00 (in 1h 4min)
            orchctl: and for 8 more jobs, which may start no sooner than 13:05:00 (in 1h 5min)

            """)
        #expect(note(Array(starts.suffix(5))).split(separator: "\n").count == 5, "five jobs: five lines, no count")
    }
}
