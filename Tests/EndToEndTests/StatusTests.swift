import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// `orchctl status` with a backlog, its filters, and its table on a real terminal.
@Suite("status end to end")
struct StatusTests {
    @Test("with a backlog of 150 newer jobs, the running job is still listed, first")
    func runningFirst() throws {
        let daemon = try TestDaemon(concurrency: 1)
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let running = try daemon.orchctl(["submit", "--shell", "echo go > \(started.path); read x < \(gate)"]).line
        #expect(started.read() == "go")
        let batch = String(repeating: "true\n", count: 150)
        #expect(try daemon.orchctl(["submit", "--batch", "-"], input: batch).status == 0)

        let status = try daemon.orchctl(["status"])
        #expect(status.status == 0, "\(status)")
        let lines = status.standardOutput.split(separator: "\n")
        #expect(lines[1].hasPrefix("\(running) ") && lines[1].contains("running"), "\(lines[1])")
        // The running job, then the newest 100 others.
        #expect(lines.filter { $0.contains(" queued ") }.count == 100)
        #expect(status.standardOutput.contains("Showing the newest 100 of 151 jobs"))

        // `orchctl` alone is `status`.
        let bare = try daemon.orchctl([])
        #expect(bare.status == 0, "\(bare)")
        #expect(bare.standardOutput.split(separator: "\n").map { $0.prefix(while: { $0 != " " }) }
                == lines.map { $0.prefix(while: { $0 != " " }) })
        try release(gate: gate)
    }

    @Test("the last line counts jobs: after a cut list's note, and for a removed queue whose finished jobs are still listed")
    func lastLineCounts() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "tq"]).status == 0)
        let id = try daemon.orchctl(["submit", "--queue", "tq", "--wait", "--", "true"]).line
        #expect(try daemon.orchctl(["queue", "remove", "tq"]).status == 0)
        let removed = try daemon.orchctl(["status", "--queue", "tq"])
        #expect(removed.status == 0, "\(removed)")
        let lines = removed.standardOutput.split(separator: "\n")
        #expect(lines.count == 3 && lines[1].hasPrefix("\(id) "), "\(removed)")
        #expect(lines.last == "0 running, 0 queued, 1 finished", "\(removed)")

        #expect(try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 3)).status == 0)
        #expect(try daemon.orchctl(["wait", "--all"]).status == 0)
        let cut = try daemon.orchctl(["status", "--limit", "2"]).standardOutput.split(separator: "\n")
        #expect(cut.suffix(2) == ["Showing the newest 2 of 4 jobs; use --all or --limit N.", "0 running, 0 queued, 4 finished"], "\(cut)")
    }

    @Test("a named job ID orchd does not have is an error, as for show: after the jobs it has, exit 1")
    func missingID() throws {
        let daemon = try TestDaemon()
        let job = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        let both = try daemon.orchctl(["status", job, "9999"])
        #expect(both.status == 1, "\(both)")
        #expect(both.standardOutput.contains("\n\(job) ") && both.standardOutput.contains("succeeded"), "\(both)")
        #expect(both.standardError == "Error: no job with ID 9999\n")
        let none = try daemon.orchctl(["status", "9999", "9998"])
        #expect(none.status == 1 && none.standardOutput.isEmpty, "\(none)")
        #expect(none.standardError == "Error: no job with ID 9999\nError: no job with ID 9998\n")
        let json = try daemon.orchctl(["status", "--json", "9999"])
        #expect(json.status == 1 && json.standardOutput == "[]\n", "\(json)")
        // A filter may leave a named job out: then nothing is missing.
        let filtered = try daemon.orchctl(["status", "--state", "queued", job])
        #expect(filtered.status == 0 && filtered.standardError.isEmpty, "\(filtered)")
        #expect(try daemon.orchctl(["status", job]).status == 0)
    }

    @Test("--result and --label filter on the server; a bad result is a usage error")
    func filters() throws {
        let daemon = try TestDaemon()
        let failedNightly = try daemon.orchctl(["submit", "--wait", "--label", "kind=nightly", "--", "false"]).line
        let okNightly = try daemon.orchctl(["submit", "--wait", "--label", "kind=nightly", "--label", "team=a", "--", "true"]).line
        let failedOther = try daemon.orchctl(["submit", "--wait", "--label", "kind=adhoc", "--", "false"]).line

        func ids(_ arguments: [String]) throws -> [String] {
            let result = try daemon.orchctl(["status", "--json"] + arguments)
            #expect(result.status == 0, "\(result)")
            let array = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
            return array.compactMap { $0["id"] as? Int }.map(String.init)
        }
        #expect(try ids(["--result", "failed"]) == [failedNightly, failedOther])
        #expect(try ids(["--label", "kind=nightly"]) == [failedNightly, okNightly])
        #expect(try ids(["--label", "kind=nightly", "--result", "failed"]) == [failedNightly])
        #expect(try ids(["--label", "kind=nightly", "--label", "team=a"]) == [okNightly])
        #expect(try ids(["--label", "kind=none"]).isEmpty)
        let json = try daemon.orchctl(["status", "--result", "succeeded", "--json"])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]])
        #expect(array.compactMap { $0["id"] as? Int }.map(String.init) == [okNightly])

        let bad = try daemon.orchctl(["status", "--result", "exploded"])
        #expect(bad.status == 64)
        #expect(bad.standardError.contains("--result"), "\(bad)")
        let conflicting = try daemon.orchctl(["status", "--result", "failed", "--state", "running"])
        #expect(conflicting.status == 64, "\(conflicting)")
    }

    @Test("on a 60-column terminal no line of status is wider than 60 columns, with a CJK name in the list; colours only there")
    func narrowTerminal() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl([
            "submit", "--wait", "--name", "夜間バックアップ処理", "--shell", "echo " + String(repeating: "データ", count: 30),
        ]).status == 0)
        #expect(try daemon.orchctl(["submit", "--wait", "--name", "🚀 deploy", "--", "sh", "-c", "exit 3"]).status == 3)
        #expect(try daemon.orchctl(["submit", "--delay", "1h", "--", "true"]).status == 0)

        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = nil
        environment["NO_COLOR"] = nil
        environment["TERM"] = "xterm"
        let terminal = try PseudoTerminal.run(Binaries.orchctl, ["--socket", daemon.socketPath, "status"], columns: 60, environment: environment)
        #expect(terminal.status == 0, "\(terminal.errors)")
        let lines = terminal.output.split(separator: "\n")
        #expect(lines.count >= 5, "\(terminal.output)")
        for line in lines {
            #expect(PseudoTerminal.displayWidth(line) <= 60, "\(line) is \(PseudoTerminal.displayWidth(line)) columns")
        }
        #expect(terminal.output.contains("夜間"), "the name is listed")
        #expect(terminal.output.contains("…"), "the command is cut")
        #expect(terminal.output.contains("\u{1B}[31mfailed(3)"), "states are coloured on a terminal")
        #expect(terminal.output.contains("in 59m") || terminal.output.contains("in 1h"), "the delayed job says when it starts")

        // $COLUMNS wins over the terminal's own width; NO_COLOR turns colours off.
        environment["COLUMNS"] = "50"
        environment["NO_COLOR"] = "1"
        let narrower = try PseudoTerminal.run(Binaries.orchctl, ["--socket", daemon.socketPath, "status"], columns: 60, environment: environment)
        for line in narrower.output.split(separator: "\n") { #expect(PseudoTerminal.displayWidth(line) <= 50, "\(line)") }
        #expect(!narrower.output.contains("\u{1B}"))

        // Piped: nothing cut to the terminal, no colours, clock times.
        let piped = try daemon.orchctl(["status"])
        #expect(!piped.standardOutput.contains("\u{1B}"))
        #expect(piped.standardOutput.contains(String(repeating: "データ", count: 30)))
        #expect(!piped.standardOutput.contains(" ago"))
        let forced = try daemon.orchctl(["status", "--color", "always"])
        #expect(forced.standardOutput.contains("\u{1B}[31mfailed(3)"))
    }

    @Test("a job waiting out its retry backoff shows under STARTED when its next attempt may start, piped and on a terminal, not when the last one started")
    func retryingShowsNextStart() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "slow", "--retry-base", "10min", "--retry-cap", "1h"]).status == 0)
        let id = try daemon.orchctl(["submit", "--queue", "slow", "--retries", "2", "--", "false"]).line
        #expect(daemon.waitForLog(containing: "job \(id) attempt 1 ended: failed(1); will retry"), "\(daemon.daemonLog)")
        let listed = try daemon.orchctl(["status", id, "--json"])
        let job = try #require((try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]])?.first)
        let notBefore = try #require((job["notBefore"] as? String).flatMap(Timestamp.parse), "\(listed)")
        let startedAt = try #require((job["startedAt"] as? String).flatMap(Timestamp.parse), "\(listed)")

        // Piped: the clock time of the next attempt's earliest start (rounded up to the second).
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        let piped = try TestDaemon.run(Binaries.orchctl, ["--socket", daemon.socketPath, "status", id], environment: environment)
        let row = piped.standardOutput.split(separator: "\n")[1].split(separator: " ")
        #expect(row[1] == "retrying(2/3)", "\(piped)")
        #expect(row[5] == Self.clockTime(Date(timeIntervalSince1970: notBefore.timeIntervalSince1970.rounded(.up))), "\(piped)")
        #expect(row[5] != Self.clockTime(startedAt), "\(piped)")

        // On a terminal: the distance to it, 5 to 10 minutes ahead (half to all of the base).
        environment["NO_COLOR"] = "1"
        environment["COLUMNS"] = nil
        let terminal = try PseudoTerminal.run(Binaries.orchctl, ["--socket", daemon.socketPath, "status", id], columns: 100, environment: environment)
        let cells = terminal.output.split(separator: "\n")[1].split(separator: " ")
        // ID, STATE, QUEUE, PRI, SUBMITTED ("0s ago"), STARTED ("in 9m"), ...
        #expect(cells[6] == "in" && ["5m", "6m", "7m", "8m", "9m", "10m"].contains(cells[7]), "\(terminal.output)")
    }

    /// `HH:MM:SS` in UTC.
    private static func clockTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: date)
    }

    @Test("info --json is one object with jsonVersion beside orchd's fields")
    func infoJSONVersion() throws {
        let daemon = try TestDaemon()
        let info = try daemon.orchctl(["info", "--json"])
        #expect(info.status == 0, "\(info)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any])
        #expect(object["jsonVersion"] as? Int == 1)
        #expect(object["version"] is String)
        #expect(object["jobs"] is [String: Any])
    }
}

/// `orchctl top --once`: one frame of the live view.
@Suite("top end to end")
struct TopTests {
    @Test("top --once shows a running job with its queue, elapsed time and last line of output, and the queue's counts")
    func once() throws {
        let daemon = try TestDaemon()
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        try #require(daemon.orchctl(["queue", "add", "builds", "--concurrency", "3"]).status == 0)
        let id = try daemon.orchctl([
            "submit", "--queue", "builds", "--name", "nightly", "--shell", "echo compiling foo.c; echo go > \(started.path); read x < \(gate)",
        ]).line
        #expect(started.read() == "go")
        #expect(try daemon.orchctl(["submit", "--wait", "--queue", "builds", "--", "sh", "-c", "exit 4"]).status == 4)

        let top = try daemon.orchctl(["top", "--once"])
        #expect(top.status == 0, "\(top)")
        let lines = top.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("orchd ") == true, "\(top.standardOutput)")
        let queueLine = try #require(lines.first { $0.hasPrefix("builds ") }, "\(top.standardOutput)")
        #expect(queueLine.split(separator: " ").prefix(5) == ["builds", "1/3", "0", "0", "1"], "running 1 of 3, 1 ended in the last minute: \(queueLine)")
        let runningLine = try #require(lines.first { $0.contains(" \(id) ") && $0.contains("nightly") }, "\(top.standardOutput)")
        #expect(runningLine.contains("builds"))
        #expect(runningLine.hasSuffix("compiling foo.c"), "\(runningLine)")
        #expect(lines.contains { $0.contains("failed(4)") }, "the recent end is listed")
        #expect(!top.standardOutput.contains("\u{1B}"), "no escape sequences when piped")

        // On a terminal of 50 columns, with --once, the frame fits.
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = nil
        let terminal = try PseudoTerminal.run(Binaries.orchctl, ["--socket", daemon.socketPath, "top", "--once"], columns: 50, environment: environment)
        #expect(terminal.status == 0, "\(terminal.errors)")
        for line in terminal.output.split(separator: "\n") {
            #expect(PseudoTerminal.displayWidth(line) <= 50, "\(line)")
        }
        try release(gate: gate)
    }

    @Test("top on a terminal draws on the alternate screen, and q quits and restores the terminal", arguments: ["q", "\u{3}"])
    func live(key: String) throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = nil
        let top = try PseudoTerminal.run(
            Binaries.orchctl, ["--socket", daemon.socketPath, "top"], columns: 80, environment: environment, typing: ("QUEUE", key))
        #expect(top.status == 0, "\(top.errors)")
        #expect(top.output.hasPrefix("\u{1B}[?1049h\u{1B}[?25l"), "enters the alternate screen")
        #expect(top.output.contains("default"), "\(top.output)")
        #expect(top.output.hasSuffix("\u{1B}[?25h\u{1B}[?1049l"), "leaves it and shows the cursor again")
    }

    @Test("top redraws when an event arrives: a job submitted while it runs appears")
    func redrawOnEvent() throws {
        let daemon = try TestDaemon()
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        defer { close(open(gate, O_WRONLY | O_CLOEXEC | O_NONBLOCK)) }
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = nil
        let top = try PseudoTerminal.run(
            Binaries.orchctl, ["--socket", daemon.socketPath, "top"], columns: 100, environment: environment,
            steps: [
                ("RUNNING  none", {
                    _ = try daemon.orchctl(["submit", "--name", "appears-live", "--shell", "echo go > \(started.path); read x < \(gate)"])
                    _ = started.read()
                    return ""
                }),
                ("appears-live", { "q" }),
            ])
        #expect(top.status == 0, "\(top.errors)")
        #expect(top.output.contains("appears-live"))
        #expect(top.output.hasSuffix("\u{1B}[?25h\u{1B}[?1049l"))
    }
}
