import FoundationEssentials
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("Display width")
struct DisplayWidthTests {
    @Test("ASCII is one column, CJK and emoji two, combining marks and joiners none", arguments: [
        ("make test", 9), ("日本語", 6), ("ｆｕｌｌ", 8), ("한국어", 6), ("🚀", 2), ("👍🏽", 2), ("🇩🇪", 2),
        ("👨‍👩‍👧", 2), ("e\u{301}", 1), ("\u{200B}", 0), ("❤️", 2), ("…", 1), ("x\u{30A}\u{316}y", 2), ("", 0),
    ])
    func widths(text: String, width: Int) {
        #expect(DisplayWidth.of(text) == width)
    }

    @Test("printable ASCII counts a column a byte, as the per-character count does; a control character in it counts none")
    func asciiFastPath() {
        let printable = String(decoding: (0x20..<0x7F).map { UInt8($0) }, as: UTF8.self)
        #expect(DisplayWidth.of(printable) == printable.count)
        #expect(DisplayWidth.of(printable[...]) == printable.reduce(0) { $0 + DisplayWidth.of($1) })
        #expect(DisplayWidth.of("a\tb\u{7F}c\r\n") == 3)
        #expect(DisplayWidth.of("sleep 1000 é") == 12)
    }

    @Test("cutting keeps within the width, never splits a wide character, and ends with …")
    func truncation() {
        #expect(DisplayWidth.truncate("日本語テキスト", to: 6) == "日本…")
        #expect(DisplayWidth.truncate("日本語テキスト", to: 7) == "日本語…")
        #expect(DisplayWidth.truncate("short", to: 5) == "short")
        #expect(DisplayWidth.truncate("longer", to: 5) == "long…")
        #expect(DisplayWidth.truncate("🚀🚀🚀", to: 4) == "🚀…")
        #expect(DisplayWidth.truncate("anything", to: 0) == "")
        // Never half an escape: the cut goes before it.
        let escaped = "x\u{1B}]0;pwn\u{7}\u{1B}\\".visible
        #expect(escaped == "x\\u{1B}]0;pwn\\u{7}\\u{1B}\\")
        #expect(DisplayWidth.truncate(escaped, to: 24) == "x\\u{1B}]0;pwn\\u{7}…")
        #expect(DisplayWidth.truncate(escaped, to: 18) == "x\\u{1B}]0;pwn…")
        #expect(DisplayWidth.truncate(escaped, to: 9) == "x\\u{1B}]…")
        #expect(DisplayWidth.truncate(escaped, to: 7) == "x…")
        #expect(DisplayWidth.truncate(escaped, to: 3) == "x…")
        #expect(DisplayWidth.truncate("a\\b\\ucde", to: 7) == "a\\b\\uc…", "a backslash and u not followed by { is text")
        for width in 1...20 {
            #expect(DisplayWidth.of(DisplayWidth.truncate("ジョブ 🚀 build 日本", to: width)) <= width)
        }
        #expect(DisplayWidth.padded("日本", to: 6) == "日本  ")
    }
}

@Suite("Terminal table")
struct TerminalTableTests {
    /// Jobs as a narrow terminal sees them: a CJK name, an emoji, a long command.
    static var jobs: [Job] {
        var named = makeJob(7, .shell("rsync -a /srv/データ/ backup:/srv/データ/ && echo done"), state: .running, submitted: -300, started: -240)
        named.spec.name = "夜間バックアップ"
        var emoji = makeJob(8, .argv(["deploy", "--target", "production-eu-west-1"]), state: .finished(.failed(exitCode: 2)),
                            queue: "deploys", priority: 10, submitted: -90, started: -80, finished: -20)
        emoji.spec.name = "🚀 deploy"
        let plain = makeJob(9, .argv(["make", "-j8", "test"]), state: .queued, submitted: -5)
        return [named, emoji, plain]
    }

    @Test("no line is wider than the terminal, at 60 columns and others; the command is cut with …", arguments: [40, 50, 60, 72, 80, 120])
    func fitsWidth(width: Int) {
        let table = JobTable(time: TimeFormatter(utc: true), maximumWidth: width, relativeTimes: true)
        let text = table.render(Self.jobs, now: referenceDate)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 4)
        for line in lines {
            #expect(DisplayWidth.of(line) <= width, "\(line) is \(DisplayWidth.of(line)) columns wide at \(width)")
        }
        #expect(lines[0].hasPrefix("ID  STATE"))
        if width <= 80 { #expect(lines[1].hasSuffix("…")) }
    }

    @Test("at 60 columns the less telling columns go and the name column stays, aligned by display width")
    func narrow() {
        let table = JobTable(time: TimeFormatter(utc: true), maximumWidth: 60, relativeTimes: true)
        let lines = table.render(Self.jobs, now: referenceDate).split(separator: "\n").map(String.init)
        #expect(!lines[0].contains("PRI"))
        #expect(lines[0].contains("NAME"))
        // The NAME column starts at the same display column on every line.
        let nameColumn = DisplayWidth.of(lines[0].components(separatedBy: "NAME")[0])
        #expect(DisplayWidth.of(lines[1].components(separatedBy: "夜間")[0]) == nameColumn)
        #expect(DisplayWidth.of(lines[2].components(separatedBy: "🚀")[0]) == nameColumn)
    }

    @Test("a NAME column only when some job has a name")
    func nameColumn() {
        let table = JobTable(time: TimeFormatter(utc: true), maximumWidth: nil)
        #expect(table.render(Self.jobs, now: referenceDate).hasPrefix("ID  STATE      QUEUE    PRI  NAME"))
        #expect(!table.render([Self.jobs[2]], now: referenceDate).contains("NAME"))
    }

    @Test("relative times on a terminal; a job to start later shows when ('in 4m'), also when retrying")
    func times() {
        let table = JobTable(time: TimeFormatter(utc: true), maximumWidth: 200, relativeTimes: true)
        var delayed = makeJob(3, .argv(["report"]), state: .waiting, submitted: -10)
        delayed.spec.notBefore = referenceDate.addingTimeInterval(4 * 60 + 5)
        var retrying = makeJob(4, .argv(["flaky"]), state: .waiting, submitted: -100, started: -90, finished: -80)
        retrying.spec.maxAttempts = 3
        retrying.spec.notBefore = referenceDate.addingTimeInterval(30)
        let lines = table.render([delayed, retrying, Self.jobs[0]], now: referenceDate).split(separator: "\n").map(String.init)
        #expect(lines[1].contains("10s ago    in 4m    -  "), "\(lines[1])")
        #expect(lines[2].contains("retrying(2/3)"), "\(lines[2])")
        #expect(lines[2].contains("in 30s"), "\(lines[2])")
        #expect(lines[3].contains("5m ago     4m ago"), "\(lines[3])")
        // Piped, clock times, also for a start to come.
        let piped = JobTable(time: TimeFormatter(utc: true), maximumWidth: nil).render([Self.jobs[0], delayed], now: referenceDate)
        #expect(piped.contains("11:55:00   11:56:00"))
        #expect(!piped.contains("in 4m"), "\(piped)")
        #expect(piped.contains(TimeFormatter(utc: true).compact(delayed.spec.notBefore!, now: referenceDate)), "\(piped)")
    }

    @Test("a job waiting for its next attempt shows when it may start, also less than a second ahead, and never when its previous attempt started")
    func nextAttempt() {
        var retrying = makeJob(4, .argv(["false"]), state: .waiting, submitted: -3, started: -1.5)
        retrying.spec.maxAttempts = 3
        retrying.spec.notBefore = referenceDate.addingTimeInterval(0.4)
        let terminal = JobTable(time: TimeFormatter(utc: true), maximumWidth: 200, relativeTimes: true)
        let piped = JobTable(time: TimeFormatter(utc: true), maximumWidth: nil)
        let onTerminal = terminal.render([retrying], now: referenceDate)
        #expect(onTerminal.contains("retrying(2/3)  default  0    3s ago     in 1s    -  "), "\(onTerminal)")
        // Piped, the start to come is rounded up: the previous attempt started at 11:59:58.5.
        let onPipe = piped.render([retrying], now: referenceDate)
        #expect(onPipe.contains("11:59:57   12:00:01  -  "), "\(onPipe)")

        // Its backoff over, queued for a slot: no start time ahead, and not the previous one.
        retrying.state = .queued
        retrying.spec.notBefore = referenceDate.addingTimeInterval(-0.5)
        #expect(terminal.render([retrying], now: referenceDate).contains("3s ago     -        -  "), "\(terminal.render([retrying], now: referenceDate))")
        #expect(piped.render([retrying], now: referenceDate).contains("11:59:57   -        -  "), "\(piped.render([retrying], now: referenceDate))")

        // Once running or finished, the attempt's own start.
        retrying.state = .finished(.failed(exitCode: 1))
        #expect(piped.render([retrying], now: referenceDate).contains("11:59:57   11:59:58"))
    }

    @Test("relative time texts", arguments: [
        (-5.0, "5s ago"), (-0.4, "0s ago"), (-61.0, "1m ago"), (-7200.0, "2h ago"), (-3 * 86_400.0, "3d ago"), (245.0, "in 4m"),
        (58.4, "in 59s"), (59.4, "in 1m"), (0.4, "in 1s"), (1.2, "in 2s"),
        (7199.0, "in 2h"), (5399.0, "in 1h"), (5400.0, "in 2h"), (3590.0, "in 1h"), (89.0, "in 1m"), (90.0, "in 2m"),
        (86_400 + 43_199.0, "in 1d"), (2 * 86_400 - 1.0, "in 2d"), (-7199.0, "1h ago"),
    ] as [(Double, String)])
    func relative(offset: Double, text: String) {
        #expect(TimeFormatter(utc: true).relative(referenceDate.addingTimeInterval(offset), now: referenceDate) == text)
    }

    @Test("colours only the STATE cell and leaves widths alone")
    func colors() {
        let plain = JobTable(time: TimeFormatter(utc: true), maximumWidth: 80)
        var colored = plain
        colored.colors = true
        let text = colored.render(Self.jobs, now: referenceDate)
        #expect(text.contains("\u{1B}[34mrunning\u{1B}[0m"))
        #expect(text.contains("\u{1B}[31mfailed(2)\u{1B}[0m"))
        #expect(!text.contains("\u{1B}[0mqueued"), "queued stays plain")
        var stripped = text
        for code in ["\u{1B}[34m", "\u{1B}[31m", "\u{1B}[0m"] { stripped = stripped.split(separator: code, omittingEmptySubsequences: false).joined() }
        #expect(stripped == plain.render(Self.jobs, now: referenceDate))
        #expect(!plain.render(Self.jobs, now: referenceDate).contains("\u{1B}"))
    }

    @Test("--color decisions: a terminal only, NO_COLOR and TERM=dumb respected, always and never as said", arguments: [
        (ColorMode.auto, true, [String: String](), true), (.auto, false, [:], false), (.auto, true, ["NO_COLOR": "1"], false),
        (.auto, true, ["NO_COLOR": ""], true), (.auto, true, ["TERM": "dumb"], false), (.always, false, ["NO_COLOR": "1"], true),
        (.never, true, [:], false),
    ])
    func colorDecision(mode: ColorMode, terminal: Bool, environment: [String: String], expected: Bool) {
        #expect(mode.enabled(isTerminal: terminal, environment: environment) == expected)
    }

    @Test("the table width: $COLUMNS, else the terminal's, else 80; none when piped")
    func tableWidth() {
        func context(terminal: Bool, columns: Int?, environment: [String: String]) -> CommandContext {
            let console = Console(writeOutput: { _ in }, writeError: { _ in }, outputIsTerminal: terminal, terminalColumns: columns)
            return CommandContext(console: console, environment: environment, uid: 0, currentDirectory: "/")
        }
        #expect(context(terminal: true, columns: 100, environment: ["COLUMNS": "60"]).tableWidth == 60)
        #expect(context(terminal: true, columns: 100, environment: ["COLUMNS": "junk"]).tableWidth == 100)
        #expect(context(terminal: true, columns: nil, environment: [:]).tableWidth == 80)
        #expect(context(terminal: false, columns: 100, environment: ["COLUMNS": "60"]).tableWidth == nil)
    }

    @Test("status lists running jobs first, then the others in ID order")
    func runningFirst() {
        let jobs = [Self.jobs[2], Self.jobs[1], Self.jobs[0]]
        #expect(StatusCommand.runningFirst(jobs).map(\.id.rawValue) == [7, 8, 9])
        let late = makeJob(20, .argv(["x"]), state: .running)
        #expect(StatusCommand.runningFirst(Self.jobs + [late]).map(\.id.rawValue) == [7, 20, 8, 9])
    }
}

@Suite("top frame")
struct TopFrameTests {
    static func snapshot(running count: Int) -> TopFrame.Snapshot {
        let running = (1...count).map { index in
            makeJob(Int64(index), .argv(["build", "target-\(index)", "日本語の引数"]), state: .running, submitted: -100, started: -65)
        }
        let ended = makeJob(100, .argv(["false"]), state: .finished(.failed(exitCode: 1)), submitted: -50, started: -40, finished: -30)
        let queue = QueueInfo(
            name: .default, concurrency: 4, paused: false, retryBaseUSec: 1, retryCapUSec: 1,
            jobs: JobCounts(waiting: 0, queued: 1_200, running: count, finished: 1))
        // Orchd's totals also count a removed queue's jobs (here 5 finished), which no queue lists.
        return TopFrame.Snapshot(
            version: "1.0", totals: JobCounts(waiting: 0, queued: 1_200, running: count, finished: 6), queues: [queue], running: running, lastOutput: [JobID(rawValue: 1): "compiling\tfoo.c"], recent: [ended])
    }

    @Test("a frame shows orchd's totals (a removed queue's jobs included), each queue's counts and throughput, the running jobs' elapsed time and last line, and recent ends")
    func content() {
        let lines = TopFrame(time: TimeFormatter(utc: true)).lines(Self.snapshot(running: 2), now: referenceDate)
        #expect(lines[0] == "orchd 1.0 at 12:00:00: 2 running, 1,200 queued, 6 finished")
        #expect(lines.contains("default  2/4      1,200   0        1          -"), "\(lines)")
        #expect(lines.contains { $0.contains("1   default  1min 5s  build target-1 日本語の引数  compiling\\tfoo.c") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("30s ago") && $0.contains("failed(1)") }, "\(lines)")
    }

    @Test("a frame fits a small terminal: every line within its width, no more lines than its height")
    func fits() {
        let frame = TopFrame(time: TimeFormatter(utc: true), width: 40, height: 12)
        let lines = frame.lines(Self.snapshot(running: 30), now: referenceDate)
        #expect(lines.count <= 12, "\(lines)")
        for line in lines { #expect(DisplayWidth.of(line) <= 40, "\(line)") }
        #expect(lines.last?.hasPrefix("… ") == true, "says how many running jobs did not fit: \(lines)")
    }

    @Test("a line cut to the terminal keeps its colours, and a colour on at the cut is reset after the …")
    func cutKeepsColours() {
        let red = "\u{1B}[31m", reset = "\u{1B}[0m"
        let line = "5  " + red + "cancelled" + reset + "  echo working; sleep 100"
        let cut = TopFrame.truncateKeepingColours(line, to: 20)
        #expect(cut == "5  " + red + "cancelled" + reset + "  echo …")
        #expect(DisplayWidth.of(TopFrame.plain(cut)) == 20)
        // Cut inside the coloured cell: the colour is reset, not left on for the next line.
        #expect(TopFrame.truncateKeepingColours(line, to: 8) == "5  " + red + "canc…" + reset)
        let frame = TopFrame(time: TimeFormatter(utc: true), width: 40, height: 30, colors: true)
        for rendered in frame.lines(Self.snapshot(running: 2), now: referenceDate) where rendered.contains("\u{1B}") {
            #expect(DisplayWidth.of(TopFrame.plain(rendered)) <= 40, "\(rendered)")
        }
    }
}
