import FoundationEssentials
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("Job table")
struct JobTableTests {
    let table = JobTable(time: TimeFormatter(utc: true), maximumWidth: nil)

    @Test("a table shows state or result, queue, priority, times, duration and command")
    func rows() {
        let jobs = [
            makeJob(1, .argv(["make", "test"]), state: .finished(.failed(exitCode: 3)), submitted: -60, started: -59, finished: -57.5),
            makeJob(2, .shell("sleep 10 && echo done"), state: .running, queue: "build", priority: 5, submitted: -30, started: -20),
            makeJob(3, .argv(["echo", "hello world"]), state: .queued, priority: -1, submitted: -10),
            makeJob(12, .argv(["true"]), state: .finished(.succeeded), submitted: -5, started: -4, finished: -4),
            makeJob(13, .argv(["yes"]), state: .finished(.signaled(signal: 9)), submitted: -3, started: -3, finished: -1),
        ]
        let expected = """
            ID  STATE        QUEUE    PRI  SUBMITTED  STARTED   DURATION  COMMAND
            1   failed(3)    default  0    11:59:00   11:59:01  1.5s      make test
            2   running      build    5    11:59:30   11:59:40  20s       sleep 10 && echo done
            3   queued       default  -1   11:59:50   -         -         echo 'hello world'
            12  succeeded    default  0    11:59:55   11:59:56  0ms       true
            13  signaled(9)  default  0    11:59:57   11:59:57  2s        yes

            """
        #expect(table.render(jobs, now: referenceDate) == expected)
        #expect(JobTable.summary(jobs) == "1 running, 1 queued, 3 finished (2 not succeeded)")
    }

    @Test("status --all-users shows each job's owner by the login name orchd gave, or by uid where it gave none")
    func ownerColumn() {
        var rootJob = makeJob(1, .argv(["true"]), state: .queued, submitted: -10)
        rootJob.submitterUid = 0
        var unknown = makeJob(2, .argv(["true"]), state: .queued, submitted: -5)
        unknown.submitterUid = 4_000_000_000
        var owners = table
        owners.showsOwner = true
        owners.userNames = [0: "root"]
        let text = owners.render([rootJob, unknown], now: referenceDate)
        #expect(text.hasPrefix("ID  OWNER       STATE   QUEUE"), "\(text)")
        #expect(text.contains("\n1   root        queued  default"), "\(text)")
        #expect(text.contains("\n2   4000000000  queued  default"), "\(text)")
        #expect(!table.render([rootJob], now: referenceDate).contains("OWNER"))
    }

    @Test("a delayed job shows when it starts while it still can; cancelled before it started, it shows none")
    func delayedThenCancelled() {
        var job = makeJob(5, .argv(["later"]), state: .waiting, submitted: -10)
        job.spec.notBefore = referenceDate.addingTimeInterval(3_600)
        #expect(table.render([job], now: referenceDate).contains("13:00:00"), "\(table.render([job], now: referenceDate))")
        job.state = .finished(.cancelled)
        let cancelled = table.render([job], now: referenceDate)
        #expect(!cancelled.contains("13:00:00"), "\(cancelled)")
        #expect(cancelled.contains("cancelled  default  0    11:59:50   -"), "\(cancelled)")
    }

    @Test("a start in another year keeps its time of day; one this year reads as other times do")
    func startNextYear() {
        let time = TimeFormatter(utc: true)
        // referenceDate is 2026-11-29T12:00:00Z.
        #expect(time.compactAhead(Timestamp.parse("2027-06-01T08:00:00Z")!, now: referenceDate) == "2027-06-01 08:00")
        #expect(time.compactAhead(Timestamp.parse("2026-12-03T06:29:00Z")!, now: referenceDate) == "12-03 06:29")
        #expect(time.compactAhead(Timestamp.parse("2026-11-29T23:30:00.2Z")!, now: referenceDate) == "23:30:01")
        // Shown to the minute, a start never reads sooner than it is.
        #expect(time.compactAhead(Timestamp.parse("2027-06-01T08:00:30Z")!, now: referenceDate) == "2027-06-01 08:01")
        #expect(time.compactAhead(Timestamp.parse("2026-12-03T06:29:30Z")!, now: referenceDate) == "12-03 06:30")
        #expect(time.compactAhead(Timestamp.parse("2026-11-29T23:59:59.5Z")!, now: referenceDate) == "11-30 00:00")
        var job = makeJob(6, .argv(["later"]), state: .waiting)
        job.spec.notBefore = Timestamp.parse("2027-06-01T08:00:00Z")
        #expect(table.render([job], now: referenceDate).contains("2027-06-01 08:00"))
    }

    @Test("a job waiting for its next attempt shows retrying(attempt/max)")
    func retrying() {
        var job = makeJob(4, .argv(["flaky"]), state: .waiting)
        job.attempt = 1
        job.spec.maxAttempts = 3
        #expect(JobText.state(of: job) == "retrying(2/3)")
        #expect(table.render([job], now: referenceDate).contains("\n4   retrying(2/3)  default"))
        job.attempt = 0
        #expect(JobText.state(of: job) == "waiting")
        job.state = .queued
        job.attempt = 2
        #expect(JobText.state(of: job) == "queued")
    }

    @Test("the status summary comes from orchd's counts; a cut list says how many jobs it hides")
    func statusSummary() {
        let jobs = [makeJob(12_344, .argv(["true"]), state: .queued), makeJob(12_345, .argv(["true"]), state: .queued)]
        let counts = JobCounts(waiting: 0, queued: 12_000, running: 2, finished: 343)
        #expect(JobTable.summary(counts) == "2 running, 12,000 queued, 343 finished")
        #expect(JobTable.summary(JobCounts(waiting: 4, queued: 1), queue: QueueName(rawValue: "io")) == "queue io: 0 running, 1 queued, 4 waiting, 0 finished")
        #expect(JobTable.truncation(shown: 100, total: 12_345) == "Showing the newest 100 of 12,345 jobs; use --all or --limit N.")
        #expect(JobTable.truncation(shown: 1, total: nil) == "Showing the newest 1 matching job; use --all or --limit N.")
        #expect(JobTable.truncation(shown: 3, total: nil) == "Showing the newest 3 matching jobs; use --all or --limit N.")
        #expect(JobTable.truncation(shown: 2, total: 1_000_000, state: "finished") == "Showing the newest 2 of 1,000,000 finished jobs; use --all or --limit N.")
        let text = StatusCommand.render(jobs, counts: counts, queue: nil, note: JobTable.truncation(shown: 2, total: 12_345),
                                        table: table, now: referenceDate)
        #expect(text.hasSuffix("""
            12345  queued  default  0    12:00:00   -        -         true
            Showing the newest 2 of 12,345 jobs; use --all or --limit N.
            2 running, 12,000 queued, 343 finished

            """), "the last line counts jobs")
        #expect(StatusCommand.render([], counts: JobCounts(), queue: nil, note: nil, table: table, now: referenceDate) == "No jobs.\n")
        #expect([0, 7, 999, 1_000, 65_536, -1_234].map(JobTable.grouped) == ["0", "7", "999", "1,000", "65,536", "-1,234"])
    }

    @Test("an empty list says so")
    func empty() {
        #expect(table.render([], now: referenceDate) == "No jobs.\n")
    }

    @Test("a long command is cut to the terminal width with an ellipsis")
    func truncation() {
        let narrow = JobTable(time: TimeFormatter(utc: true), maximumWidth: 70)
        let job = makeJob(1, .shell(String(repeating: "x", count: 100)), state: .queued)
        let lines = narrow.render([job], now: referenceDate).split(separator: "\n")
        #expect(lines[1].count == 70)
        #expect(lines[1].hasSuffix("x…"))
    }

    @Test("newlines in a shell command stay inside the row")
    func controlCharacters() {
        let job = makeJob(1, .shell("echo a\necho b"), state: .queued)
        #expect(table.render([job], now: referenceDate).contains("echo a\\necho b\n"))
    }

    @Test("results render with their payload", arguments: [
        (JobState.finished(.failed(exitCode: 3)), "failed(3)"), (.finished(.succeeded), "succeeded"),
        (.finished(.signaled(signal: 9)), "signaled(9)"), (.finished(.cancelled), "cancelled"),
        (.finished(.timedOut), "timed_out"), (.finished(.dependencyFailed(JobID(rawValue: 4))), "dependency_failed(4)"),
        (.waiting, "waiting"), (.running, "running"),
    ])
    func stateText(state: JobState, text: String) {
        #expect(JobText.state(state) == text)
    }

    @Test("show prints every field as key: value lines")
    func show() {
        let job = makeJob(7, .argv(["make", "test"]), state: .finished(.failed(exitCode: 3)), started: 1, finished: 3)
        let text = ShowCommand.render(job, time: TimeFormatter(utc: true), now: referenceDate)
        #expect(text.contains("id:            7\n"))
        #expect(text.contains("result:        failed(3)\n"))
        #expect(text.contains("exit code:     3\n"))
        #expect(text.contains("submitted:     2026-11-29 12:00:00\n"))
        #expect(text.contains("duration:      2s\n"))
        #expect(text.contains("cwd:           /tmp\n"))
        #expect(text.contains("attempt:       1 of 1\n"))
        #expect(!text.contains("max attempts"), "the attempts allowed are said once, in 'attempt: N of M'")
        #expect(text.contains("not before:    -\n"))
        #expect(text.contains("timeout:       -\n"))
        #expect(text.contains("unique key:    -\n"))
        #expect(!text.contains("attempts:\n"))
    }

    @Test("show makes control characters visible in every text a submitter chose: no escape sequence reaches the terminal")
    func showEscapesControlCharacters() {
        let escape = "\u{1B}]2;pwned\u{7}\u{1B}[2J\r\n"
        var job = makeJob(7, .argv(["printf", escape]), state: .finished(.spawnFailed(reason: "cannot enter working directory " + escape)))
        job.spec.name = "n" + escape
        job.spec.cwd = "/tmp/" + escape
        job.spec.uniqueKey = "k" + escape
        job.spec.labels = ["l" + escape: "v" + escape]
        let text = ShowCommand.render(job, time: TimeFormatter(utc: true), now: referenceDate)
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(text.debugDescription)")
        #expect(text.contains("name:          n\\u{1B}]2;pwned\\u{7}\\u{1B}[2J\\r\\n\n"), "\(text)")
    }

    @Test("show lists the new fields and the finished attempts, one line each")
    func showAttempts() throws {
        var job = makeJob(7, .argv(["flaky"]), state: .running, started: 10)
        job.attempt = 3
        job.spec.maxAttempts = 12
        job.spec.notBefore = referenceDate.addingTimeInterval(9)
        job.spec.timeoutUSec = 90_000_000
        job.spec.uniqueKey = "flaky-nightly"
        let attempts = [
            JobAttempt(attempt: 1, startedAt: referenceDate.addingTimeInterval(1), finishedAt: referenceDate.addingTimeInterval(2), result: .failed(exitCode: 1)),
            JobAttempt(attempt: 2, startedAt: nil, finishedAt: referenceDate.addingTimeInterval(5), result: .spawnFailed(reason: "No such file or directory")),
        ]
        let text = ShowCommand.render(job, attempts: attempts, time: TimeFormatter(utc: true), now: referenceDate.addingTimeInterval(20))
        #expect(text.contains("attempt:       3 of 12\n"))
        #expect(text.contains("not before:    2026-11-29 12:00:09\n"))
        #expect(text.contains("timeout:       1min 30s\n"))
        #expect(text.contains("unique key:    flaky-nightly\n"))
        // Between attempts, the next one is named as status names it (retrying(2/4)).
        var retrying = makeJob(9, .argv(["flaky"]), state: .waiting)
        retrying.attempt = 1
        retrying.spec.maxAttempts = 4
        #expect(ShowCommand.render(retrying, time: TimeFormatter(utc: true), now: referenceDate).contains("attempt:       1 of 4; attempt 2 waits to start\n"))
        #expect(JobText.state(of: retrying) == "retrying(2/4)")
        // A start 8.4 s ahead reads as status shows it: the second it may start in, not the one before.
        var delayed = makeJob(8, .argv(["later"]), state: .waiting)
        delayed.spec.notBefore = referenceDate.addingTimeInterval(8.4)
        #expect(ShowCommand.render(delayed, time: TimeFormatter(utc: true), now: referenceDate).contains("not before:    2026-11-29 12:00:09\n"))
        // Once passed, it is not rounded up: it never reads later than the start it allowed.
        delayed.state = .running
        delayed.startedAt = referenceDate.addingTimeInterval(8.9)
        let started = ShowCommand.render(delayed, time: TimeFormatter(utc: true), now: referenceDate.addingTimeInterval(9.5))
        #expect(started.contains("not before:    2026-11-29 12:00:08\n") && started.contains("started:       2026-11-29 12:00:08\n"), "\(started)")
        #expect(text.hasSuffix("""
            attempts:
              1  failed(1)     started 2026-11-29 12:00:01  finished 2026-11-29 12:00:02
              2  spawn_failed  started -  finished 2026-11-29 12:00:05

            """))

        // --json: the job object with an `attempts` field.
        let json = try JSONOutput.text(JobWithAttempts(job: job, attempts: attempts))
        let object = try JSONDecoder().decode([String: JSONValue].self, from: Data(json.utf8))
        #expect(object["id"] == .integer(7))
        #expect(object["uniqueKey"] == .string("flaky-nightly"))
        #expect(object["timeoutUSec"] == .integer(90_000_000))
        guard case .array(let list)? = object["attempts"] else { Issue.record("no attempts array"); return }
        #expect(list.count == 2)
        #expect(try JSONDecoder().decode(Job.self, from: Data(json.utf8)) == job)
    }
}
