import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("Queue commands")
struct QueueCommandTests {
    func queue(_ name: String, paused: Bool = false) -> QueueInfo {
        QueueInfo(name: QueueName(rawValue: name)!, concurrency: 2, paused: paused, retryBaseUSec: 1_000_000,
                  retryCapUSec: 600_000_000, jobs: JobCounts(waiting: 1, queued: 12, running: 2, finished: 140))
    }

    @Test("queue set needs at least one setting, and sends the ones given")
    func setNeedsASetting() throws {
        let error = #expect(throws: CommandLineError.self) { try QueueSetCommand.makeParameters(try invocation(["queue", "set", "build"])) }
        #expect(error?.message == "nothing to change: give --concurrency, --retry-base or --retry-cap")
        #expect(error?.command == "queue set")
        let parameters = try QueueSetCommand.makeParameters(try invocation(["queue", "set", "build", "--retry-base", "10s", "--concurrency", "4"]))
        #expect(parameters.name.rawValue == "build")
        #expect(parameters.concurrency == 4)
        #expect(parameters.retryBaseUSec == 10_000_000)
        #expect(parameters.retryCapUSec == nil)

        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", "/nonexistent", "queue", "set", "build"], context: testContext(capture)) == .usage)
        #expect(capture.standardError.hasSuffix("See 'orchctl queue set --help'.\n"))
    }

    @Test("queues shows a table with counts and retry backoff")
    func table() {
        #expect(QueueText.table([queue("default"), queue("io", paused: true)]) == """
            NAME     CONCURRENCY  PAUSED  RUNNING  QUEUED  WAITING  FINISHED  RETRY BASE/CAP
            default  2            no      2        12      1        140       1s/10min
            io       2            yes     2        12      1        140       1s/10min

            """)
        #expect(QueueText.table([]) == "No queues.\n")
        #expect(QueueText.settings(queue("io")) == """
            queue:       io
            concurrency: 2
            paused:      no
            retry base:  1s
            retry cap:   10min

            """)
    }

    @Test("pause and resume say what changed")
    func changes() {
        let before = [queue("a"), queue("b", paused: true)]
        let after = [queue("a", paused: true), queue("b", paused: true)]
        #expect(QueuePausing.changes(before: before, after: after, pause: true) == "paused a\nb was already paused\n")
        let resumed = [queue("a"), queue("b")]
        #expect(QueuePausing.changes(before: [queue("a", paused: true), queue("b")], after: resumed, pause: false) == "resumed a\nb was already running\n")
        #expect(QueuePausing.changes(before: [], after: [queue("new", paused: true)], pause: true) == "paused new\n")
        #expect(QueuePausing.changes(before: [], after: [], pause: false) == "No queues to resume.\n")
    }

    @Test("prune counts jobs")
    func prune() {
        #expect(PruneCommand.message(pruned: 0) == "pruned 0 jobs")
        #expect(PruneCommand.message(pruned: 1) == "pruned 1 job")
        #expect(PruneCommand.message(pruned: 12) == "pruned 12 jobs")
    }
}
