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
            1 running, 1 queued, 3 finished (2 not succeeded)

            """
        #expect(table.render(jobs, now: referenceDate) == expected)
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
    }
}
