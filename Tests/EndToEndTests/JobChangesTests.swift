import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// Work on many jobs at once and change jobs in place: `cancel --queue/--state/--signal`,
/// `retry --failed`, `hold`/`release`, `edit`, `suspend`/`continue`, end to end.
@Suite("Job changes end to end")
struct JobChangesTests {
    private func job(_ daemon: TestDaemon, _ id: String) throws -> [String: Any] {
        let shown = try daemon.orchctl(["show", id, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any], "\(shown)")
    }

    @Test("cancel --queue and --state cancel what matches, alone or together, and print how many and which")
    func cancelMatching() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "q"]).status == 0)
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let inQ = try (0..<3).map { _ in try daemon.orchctl(["submit", "--queue", "q", "--", "true"]).line }
        let delayed = try daemon.orchctl(["submit", "--queue", "q", "--delay", "1h", "--", "true"]).line
        let other = try daemon.orchctl(["submit", "--", "true"]).line
        let both = try daemon.orchctl(["cancel", "--queue", "q", "--state", "queued"])
        #expect(both.status == 0 && both.standardOutput == "cancelled 3 jobs: \(inQ.joined(separator: " "))\n", "\(both)")
        #expect(try job(daemon, delayed)["state"] as? String == "waiting")
        #expect(try job(daemon, other)["state"] as? String == "queued")
        #expect(try daemon.orchctl(["cancel", "--queue", "q"]).standardOutput == "cancelled 1 job: \(delayed)\n")
        #expect(try daemon.orchctl(["cancel", "--state", "queued"]).standardOutput == "cancelled 1 job: \(other)\n")
        #expect(try daemon.orchctl(["cancel", "--state", "waiting"]).standardOutput == "cancelled no jobs\n")
        // Bad input: nothing to select, IDs with a filter, a state that cannot be cancelled.
        #expect(try daemon.orchctl(["cancel"]).status == 64)
        #expect(try daemon.orchctl(["cancel", other, "--queue", "q"]).status == 64)
        #expect(try daemon.orchctl(["cancel", "--state", "finished"]).status == 64)
        // A queue orchd does not know is an error, not "nothing matched".
        for command in [["cancel", "--queue", "qq"], ["retry", "--failed", "--queue", "qq"]] {
            let unknown = try daemon.orchctl(command)
            #expect(unknown.status == 1 && unknown.standardError.contains("no queue named 'qq'"), "\(command): \(unknown)")
        }
    }

    /// Every job as `status --all --json` shows it, by ID.
    private func listed(_ daemon: TestDaemon) throws -> [String: [String: Any]] {
        let shown = try daemon.orchctl(["status", "--all", "--json"])
        let jobs = try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [[String: Any]], "\(shown)")
        return Dictionary(uniqueKeysWithValues: jobs.compactMap { job in (job["id"] as? Int).map { (String($0), job) } })
    }

    @Test("a cancel of more jobs than one turn takes cancels each of them and starts none meanwhile, though a slot frees")
    func cancelManyStartsNone() throws {
        let daemon = try TestDaemon(concurrency: 1)
        // The running job ends once the cancel has ended the first of the queued jobs, while
        // later turns are still to come: its slot frees then, and none of the jobs still
        // queued may take it.
        let blocker = try daemon.orchctl([
            "submit", "--shell",
            "until '\(Binaries.orchctl)' --socket '\(daemon.socketPath)' show 2 --json | grep -q cancelled; do sleep 0.01; done",
        ]).line
        #expect(blocker == "1")
        let submitted = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 4_000))
        let ids = submitted.standardOutput.split(separator: "\n").map(String.init)
        #expect(submitted.status == 0 && ids.count == 4_000 && ids.first == "2", "\(submitted.standardError)")
        let cancel = try OrchctlStream(daemon, ["cancel", "--state", "queued"])
        defer { cancel.stop() }
        let printed = try #require(cancel.rest(timeout: 120))
        #expect(cancel.exitStatus() == 0)
        #expect(printed.hasPrefix("cancelled 4000 jobs: \(ids[0]) "), "\(printed.prefix(80))")
        #expect(try daemon.orchctl(["wait", blocker]).status == 0)
        let jobs = try listed(daemon)
        let notCancelled = ids.filter { jobs[$0]?["result"] as? String != "cancelled" || jobs[$0]?["attempt"] as? Int != 0 }
        #expect(notCancelled.isEmpty, "\(notCancelled.prefix(5)) of \(notCancelled.count): \(notCancelled.first.map { jobs[$0] ?? [:] } ?? [:])")
        let counts = try daemon.orchctl(["status"]).standardOutput.split(separator: "\n").first { $0.contains(" running, ") }.map(String.init)
        #expect(counts == "0 running, 0 queued, 4,001 finished", "\(counts ?? "")")
    }

    @Test("a job moved to another queue while a cancel --queue of many is under way is not cancelled once the move is acknowledged")
    func cancelManyKeepsMovedJob() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "other"]).status == 0)
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let submitted = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 3_000))
        let last = try #require(submitted.standardOutput.split(separator: "\n").last.map(String.init))
        let cancel = try OrchctlStream(daemon, ["cancel", "--queue", "default"])
        defer { cancel.stop() }
        // The edit is answered before the cancel's last turn, or after the job was cancelled.
        let moved = try daemon.orchctl(["edit", last, "--queue", "other"])
        _ = cancel.rest(timeout: 120)
        #expect(cancel.exitStatus() == 0)
        let job = try job(daemon, last)
        if moved.status == 0 {
            #expect(job["queue"] as? String == "other" && job["state"] as? String == "queued", "\(job)")
        } else {
            #expect(job["result"] as? String == "cancelled", "\(moved)")
        }
    }

    @Test("a cancel of many fails the waiting dependents of the jobs it ends as a cancel of a few does, in its first turn or a later one")
    func cancelManyDependents() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause"]).status == 0)
        var results: [Int: [String: String]] = [:]
        for count in [10, 2_500] {
            let first = try daemon.orchctl(["submit", "--", "true"]).line
            let dependent = try daemon.orchctl(["submit", "--after", first, "--", "true"]).line
            let middle = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: count))
            let last = try #require(middle.standardOutput.split(separator: "\n").last.map(String.init))
            let lastDependent = try daemon.orchctl(["submit", "--after", last, "--", "true"]).line
            // Of 2,500, in a later turn than its dependency: failed when that one ended.
            let laterDependent = try daemon.orchctl(["submit", "--after", first, "--", "true"]).line
            let cancel = try daemon.orchctl(["cancel", "--queue", "default"])
            let printed = cancel.standardOutput.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            #expect(cancel.status == 0 && printed.starts(with: ["cancelled", "\(count + 1)", "jobs:", first]), "\(cancel.standardOutput.prefix(60))")
            #expect(!printed.contains(dependent) && !printed.contains(lastDependent) && !printed.contains(laterDependent))
            #expect(printed.last == last)
            let jobs = try listed(daemon)
            results[count] = [
                "first": jobs[first]?["result"] as? String ?? "?", "dependent": jobs[dependent]?["result"] as? String ?? "?",
                "dependency": (jobs[dependent]?["failedDependency"] as? Int).map(String.init) == first ? "first" : "?",
                "last": jobs[last]?["result"] as? String ?? "?", "lastDependent": jobs[lastDependent]?["result"] as? String ?? "?",
                "laterDependent": jobs[laterDependent]?["result"] as? String ?? "?",
            ]
        }
        let expected = [
            "first": "cancelled", "dependent": "dependency_failed", "dependency": "first", "last": "cancelled",
            "lastDependent": "dependency_failed", "laterDependent": "dependency_failed",
        ]
        #expect(results[10] == expected && results[2_500] == expected, "\(results)")
    }

    @Test("Cancel and CancelMatching called with more answer in pages, which together give each cancelled job once, in order")
    func cancelInPages() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let submitted = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 2_500))
        let ids = submitted.standardOutput.split(separator: "\n").compactMap { Int64($0) }.map(JobID.init(rawValue:))
        #expect(ids.count == 2_500)
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        var pages: [[Job]] = []
        try client.stream(JobsInterface.cancel, .init(ids: Array(ids.prefix(1_200)))) { reply in
            pages.append(reply.jobs)
            return true
        }
        #expect(pages.count > 1 && pages.joined().map(\.id) == Array(ids.prefix(1_200)), "\(pages.map(\.count))")
        pages = []
        try client.stream(JobsInterface.cancelMatching, .init(state: "queued")) { reply in
            pages.append(reply.jobs)
            return true
        }
        #expect(pages.count > 1 && pages.joined().map(\.id) == Array(ids.dropFirst(1_200)), "\(pages.map(\.count))")
        let counts = try daemon.orchctl(["status"]).standardOutput.split(separator: "\n").first { $0.contains(" running, ") }
        #expect(counts == "0 running, 0 queued, 2,500 finished")
    }

    @Test("RetryFailed called with more answers in pages, the refused first, then the retried jobs, each once and in order; retry --failed gathers them")
    func retryFailedInPages() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause"]).status == 0)
        func batch(_ count: Int, after dependency: String) throws -> [JobID] {
            let line = "{\"argv\": [\"true\"], \"after\": [\(dependency)]}\n"
            let submitted = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: line, count: count))
            let ids = submitted.standardOutput.split(separator: "\n").compactMap { Int64($0) }.map(JobID.init(rawValue:))
            #expect(ids.count == count, "\(submitted)")
            return ids
        }
        // Dependents of a cancelled job cannot be retried; those of a failed one can, after it.
        let cancelled = try daemon.orchctl(["submit", "--", "true"]).line
        let refusedIDs = try batch(1_100, after: cancelled)
        let failed = try daemon.orchctl(["submit", "--", "false"]).line
        let retriedIDs = try [JobID(rawValue: #require(Int64(failed)))] + batch(1_200, after: failed)
        #expect(try daemon.orchctl(["cancel", cancelled]).status == 0)
        #expect(try daemon.orchctl(["resume"]).status == 0)
        #expect(try daemon.orchctl(["wait", failed]).status == 1)
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        var pages: [JobsInterface.RetryFailedReply] = []
        try client.stream(JobsInterface.retryFailed, .init()) { reply in
            pages.append(reply)
            return true
        }
        let refusalPages = pages.prefix { !$0.refused.isEmpty }
        let jobPages = pages.dropFirst(refusalPages.count)
        #expect(refusalPages.count > 1 && refusalPages.allSatisfy(\.jobs.isEmpty), "\(pages.map { ($0.jobs.count, $0.refused.count) })")
        #expect(jobPages.count > 1 && jobPages.allSatisfy(\.refused.isEmpty), "\(pages.map { ($0.jobs.count, $0.refused.count) })")
        #expect(refusalPages.flatMap(\.refused).map(\.id) == refusedIDs)
        #expect(refusalPages.first?.refused.first?.message.contains("job \(cancelled), finished cancelled") == true, "\(pages.first?.refused.first as Any)")
        #expect(jobPages.flatMap(\.jobs).map(\.id) == retriedIDs)
        // orchctl gathers the pages: the next retry finds the same refused jobs and nothing to retry.
        let again = try daemon.orchctl(["retry", "--failed"])
        #expect(again.status == 1 && again.standardOutput == "retried no jobs\n", "\(again.status) \(again.standardOutput)")
        #expect(again.standardError.split(separator: "\n").count == refusedIDs.count)
        let counts = try daemon.orchctl(["status"]).standardOutput.split(separator: "\n").first { $0.contains(" running, ") }
        #expect(counts == "0 running, 1 queued, 1,200 waiting, 1,101 finished", "\(counts ?? "")")
    }

    @Test("cancel of many IDs, most of them finished or unknown, reports each refused one once and cancels the others")
    func cancelManyRefusedIDs() throws {
        let daemon = try TestDaemon()
        let submitted = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 300))
        let finished = submitted.standardOutput.split(separator: "\n").map(String.init)
        #expect(finished.count == 300)
        #expect(try daemon.orchctl(["wait"] + finished).status == 0)
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let queued = try (0..<3).map { _ in try daemon.orchctl(["submit", "--", "true"]).line }
        let unknown = (1...5).map { String(9_000 + $0) }
        let cancelled = try daemon.orchctl(["cancel"] + unknown.prefix(2) + finished + queued + unknown.dropFirst(2))
        #expect(cancelled.status == 1)
        #expect(cancelled.standardOutput == queued.map { "cancelled \($0)\n" }.joined(), "\(cancelled.standardOutput)")
        let errors = Set(cancelled.standardError.split(separator: "\n").map(String.init))
        let expected = Set(finished.map { "Error: job \($0) has already finished" } + unknown.map { "Error: no job with ID \($0)" })
        #expect(errors == expected && cancelled.standardError.split(separator: "\n").count == expected.count, "\(cancelled.standardError.prefix(500))")
    }

    @Test("cancel of jobs behind an unknown ID past 2^53 reports that ID exactly and cancels the others",
          arguments: ["9007199254740993", "9223372036854775807"])
    func cancelBehindHugeUnknownID(unknown: String) throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let queued = try (0..<2).map { _ in try daemon.orchctl(["submit", "--", "true"]).line }
        // The first ID orchd refuses: its error names it, which a Double would have rounded to
        // another ID (and orchctl then stopped, cancelling nothing).
        let cancelled = try daemon.orchctl(["cancel", unknown] + queued)
        #expect(cancelled.status == 1, "\(cancelled)")
        #expect(cancelled.standardError == "Error: no job with ID \(unknown)\n", "\(cancelled)")
        #expect(cancelled.standardOutput == queued.map { "cancelled \($0)\n" }.joined(), "\(cancelled)")
    }

    @Test("cancel --signal INT sends SIGINT first; an unknown signal name is a usage error")
    func cancelSignal() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/ready")
        let id = try daemon.orchctl([
            "submit", "--shell", "trap 'echo got INT; exit 7' INT; echo go > '\(marker.path)'; while :; do sleep 0.05; done",
        ]).line
        #expect(marker.read() == "go")
        for bad in ["FOO", "STOP", "9x", ""] {
            let refused = try daemon.orchctl(["cancel", "--signal", bad, id])
            #expect(refused.status == 64, "\(bad): \(refused)")
        }
        #expect(try daemon.orchctl(["cancel", "--signal", "sigint", id]).status == 0)
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "got INT\n")
        #expect(try job(daemon, id)["result"] as? String == "cancelled")
    }

    @Test("cancel of a job that ignores SIGTERM says on stderr what it waits for, then cancels it when the grace ends")
    func cancelWaitingForGrace() throws {
        // A grace well past the note's second, so the note must come before the reply.
        let daemon = try TestDaemon(arguments: ["--kill-grace", "4s"])
        let marker = try ReadyMarker(path: daemon.directory + "/ready")
        let id = try daemon.orchctl(["submit", "--shell", "trap '' TERM; echo go > '\(marker.path)'; sleep 100"]).line
        #expect(marker.read() == "go")
        let cancelled = try daemon.orchctl(["cancel", id])
        #expect(cancelled.status == 0 && cancelled.standardOutput == "cancelled \(id)\n", "\(cancelled)")
        #expect(cancelled.standardError.contains("waiting for the processes to end"), "\(cancelled)")
        #expect(cancelled.standardError.contains("'orchctl cancel --signal KILL' ends it now"), "\(cancelled)")
        #expect(try job(daemon, id)["result"] as? String == "cancelled")
    }

    @Test("a second cancel --signal KILL ends at once the grace a first cancel waits out for a job that ignores SIGTERM")
    func secondCancelKills() throws {
        // An hour's grace: both cancels return within the test's time only if the second's
        // SIGKILL goes to the job while the first one's teardown runs.
        let daemon = try TestDaemon(arguments: ["--kill-grace", "1h"])
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let termed = try ReadyMarker(path: daemon.directory + "/termed")
        let id = try daemon.orchctl([
            "submit", "--shell", "trap 'echo term > \(termed.path)' TERM; echo go > '\(started.path)'; while :; do sleep 0.05; done",
        ]).line
        #expect(started.read() == "go")
        let first = Process()
        first.executableURL = URL(fileURLWithPath: Binaries.orchctl)
        first.arguments = ["--socket", daemon.socketPath, "cancel", id]
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        try first.run()
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        #expect(termed.read() == "term", "the first cancel's SIGTERM arrived and was ignored")
        let second = try daemon.orchctl(["cancel", "--signal", "KILL", id])
        #expect(second.status == 0 && second.line == "cancelled \(id)", "\(second)")
        #expect(first.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "the first cancel did not return")
        #expect(first.terminationStatus == 0)
        #expect(try job(daemon, id)["result"] as? String == "cancelled")
    }

    @Test("retry --failed retries each failed job (not cancelled or succeeded), of --queue when given, and reports refusals")
    func retryFailed() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "q"]).status == 0)
        let failedQ = try daemon.orchctl(["submit", "--queue", "q", "--wait", "--", "false"]).line
        let failed = try daemon.orchctl(["submit", "--wait", "--unique", "k", "--", "false"]).line
        _ = try daemon.orchctl(["submit", "--wait", "--", "true"])
        #expect(try daemon.orchctl(["pause", "q"]).status == 0)
        let cancelled = try daemon.orchctl(["submit", "--queue", "q", "--", "true"]).line
        #expect(try daemon.orchctl(["cancel", cancelled]).status == 0)
        let one = try daemon.orchctl(["retry", "--failed", "--queue", "q"])
        #expect(one.status == 0 && one.standardOutput == "retried 1 job: \(failedQ)\n", "\(one)")
        #expect(try job(daemon, failedQ)["state"] as? String == "queued")
        #expect(try job(daemon, cancelled)["result"] as? String == "cancelled")
        // Another live job holds the key of the failed one: that retry is refused, and said so.
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let holder = try daemon.orchctl(["submit", "--unique", "k", "--", "true"]).line
        let refused = try daemon.orchctl(["retry", "--failed"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.standardOutput == "retried no jobs\n", "\(refused)")
        #expect(refused.standardError.contains("Error: job \(failed) not retried: job \(holder) with unique key 'k'"), "\(refused)")
        #expect(try daemon.orchctl(["retry", "--queue", "q"]).status == 64, "--queue needs --failed")
        #expect(try daemon.orchctl(["retry", "--failed", failed]).status == 64)
    }

    @Test("a held job does not start, shows as held, stays held across a restart, and runs once released")
    func holdAndRelease() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "one", "--concurrency", "1"]).status == 0)
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let first = try daemon.orchctl(["submit", "--queue", "one", "--shell", "echo go > '\(marker.path)'; cat '\(gate)' >/dev/null"]).line
        let second = try daemon.orchctl(["submit", "--queue", "one", "--", "true"]).line
        #expect(marker.read() == "go")
        let held = try daemon.orchctl(["hold", second])
        #expect(held.status == 0 && held.standardOutput == "held \(second)\n", "\(held)")
        #expect(try job(daemon, second)["held"] as? Bool == true)
        #expect(try daemon.orchctl(["status"]).standardOutput.contains("queued,held"))
        // Holding a running job, or a finished one, is refused.
        let running = try daemon.orchctl(["hold", first])
        #expect(running.status == 1 && running.standardError.contains("job \(first) has already started, so it cannot be held"), "\(running)")
        try release(gate: gate)
        #expect(try daemon.orchctl(["wait", first]).status == 0)
        // The slot is free, and the held job still did not start.
        #expect(try job(daemon, second)["state"] as? String == "queued")
        let finished = try daemon.orchctl(["hold", first])
        #expect(finished.status == 1 && finished.standardError.contains("already finished"), "\(finished)")
        #expect(daemon.stop() == 0)
        try daemon.start()
        #expect(try job(daemon, second)["held"] as? Bool == true)
        #expect(try job(daemon, second)["state"] as? String == "queued")
        #expect(try daemon.orchctl(["release", second]).standardOutput == "released \(second)\n")
        #expect(try daemon.orchctl(["wait", second]).status == 0)
        #expect(try daemon.orchctl(["hold", "99"]).status == 1)
    }

    @Test("edit changes a job that has not started; a start ahead makes it wait; started or finished jobs are refused")
    func edit() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "other"]).status == 0)
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let id = try daemon.orchctl(["submit", "--name", "old", "--", "true"]).line
        #expect(try daemon.orchctl(["edit", id, "--priority", "5", "--name", "new", "--queue", "other"]).standardOutput == "edited \(id)\n")
        var shown = try job(daemon, id)
        #expect(shown["priority"] as? Int == 5 && shown["name"] as? String == "new" && shown["queue"] as? String == "other", "\(shown)")
        #expect(try daemon.orchctl(["edit", id, "--delay", "1h"]).status == 0)
        shown = try job(daemon, id)
        #expect(shown["state"] as? String == "waiting" && shown["notBefore"] != nil, "\(shown)")
        let events = try daemon.orchctl(["events", "--job", id]).standardOutput
        #expect(events.contains("\"kind\":\"requeued\"") && !events.contains("retrying"), "an edit is no retry: \(events)")
        let counts = try daemon.orchctl(["queues", "--json"]).standardOutput.filter { !$0.isWhitespace }
        #expect(counts.contains("\"waiting\":1"), "the queue counts moved with the job: \(counts)")
        #expect(counts.contains("\"name\":\"default\"") && !counts.contains("\"queued\":1"), "\(counts)")
        let unknown = try daemon.orchctl(["edit", id, "--queue", "nope"])
        #expect(unknown.status == 1 && unknown.standardError.contains("no queue named 'nope'"), "\(unknown)")
        #expect(try daemon.orchctl(["edit", id]).status == 64, "nothing to change")
        #expect(try daemon.orchctl(["edit", id, "--at", "10:00", "--delay", "1s"]).status == 64)
        #expect(try daemon.orchctl(["edit", id, "--name", ""]).status == 0)
        #expect(try job(daemon, id)["name"] is NSNull)
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
        let finished = try daemon.orchctl(["edit", id, "--priority", "1"])
        #expect(finished.status == 1 && finished.standardError.contains("job \(id) has already finished"), "\(finished)")
        #expect(try daemon.orchctl(["resume"]).status == 0)
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let running = try daemon.orchctl(["submit", "--shell", "echo go > '\(marker.path)'; cat '\(gate)' >/dev/null"]).line
        #expect(marker.read() == "go")
        let refused = try daemon.orchctl(["edit", running, "--priority", "1"])
        #expect(refused.status == 1 && refused.standardError.contains("has already started, so it cannot be edited"), "\(refused)")
        try release(gate: gate)
        #expect(try daemon.orchctl(["wait", running]).status == 0)
    }

    @Test("suspend stops a running job's processes and shows it suspended; continue lets it finish; a suspended job can be cancelled")
    func suspendAndContinue() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl(["submit", "--shell", "echo go > '\(marker.path)'; cat '\(gate)' >/dev/null; echo done"]).line
        #expect(marker.read() == "go")
        #expect(try daemon.orchctl(["suspend", id]).standardOutput == "suspended \(id)\n")
        let shown = try job(daemon, id)
        #expect(shown["suspended"] as? Bool == true && shown["state"] as? String == "running", "\(shown)")
        #expect(try daemon.orchctl(["status"]).standardOutput.contains("running,suspended"))
        let info = try JSONSerialization.jsonObject(with: Data(try daemon.orchctl(["info", "--json"]).standardOutput.utf8)) as? [String: Any]
        if info?["containment"] as? String == "cgroup", let subtree = info?["cgroup"] as? String {
            let knob = try String(contentsOfFile: subtree + "/job-\(id)-1/cgroup.freeze", encoding: .utf8)
            #expect(knob.hasPrefix("1"), "the job's cgroup is frozen")
        }
        #expect(try daemon.orchctl(["suspend", id]).status == 0, "suspending a suspended job changes nothing")
        #expect(try daemon.orchctl(["continue", id]).status == 0)
        #expect(try job(daemon, id)["suspended"] as? Bool == false)
        try release(gate: gate)
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "done\n")
        let finished = try daemon.orchctl(["suspend", id])
        #expect(finished.status == 1 && finished.standardError.contains("already finished"), "\(finished)")

        // A suspended job is torn down when cancelled (thawed first).
        let other = try ReadyMarker(path: daemon.directory + "/other")
        let sleeper = try daemon.orchctl(["submit", "--shell", "echo go > '\(other.path)'; exec sleep 600"]).line
        #expect(other.read() == "go")
        #expect(try daemon.orchctl(["suspend", sleeper]).status == 0)
        #expect(try daemon.orchctl(["cancel", sleeper]).status == 0)
        #expect(try job(daemon, sleeper)["result"] as? String == "cancelled")

        #expect(try daemon.orchctl(["pause"]).status == 0)
        let queued = try daemon.orchctl(["submit", "--", "true"]).line
        let notRunning = try daemon.orchctl(["continue", queued])
        #expect(notRunning.status == 1 && notRunning.standardError.contains("job \(queued) is not running, so it cannot be continued"), "\(notRunning)")
    }

    @Test("a suspended job is thawed before its teardown, so its SIGTERM handler runs: on cancel, and when its timeout comes",
          arguments: [[String](), ["--containment", "process-group"]])
    func suspendedTeardown(arguments: [String]) throws {
        let daemon = try TestDaemon(arguments: arguments)
        let script = { (marker: String) in "trap 'echo got TERM; exit 3' TERM; echo go > '\(marker)'; while :; do sleep 0.05; done" }
        let cancelled = try ReadyMarker(path: daemon.directory + "/cancelled")
        let id = try daemon.orchctl(["submit", "--shell", script(cancelled.path)]).line
        #expect(cancelled.read() == "go")
        #expect(try daemon.orchctl(["suspend", id]).status == 0)
        #expect(try job(daemon, id)["suspended"] as? Bool == true)
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "got TERM\n")
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "cancelled" && shown["suspended"] as? Bool == false, "\(shown)")

        // The timeout counts on while the job is suspended.
        let timed = try ReadyMarker(path: daemon.directory + "/timed")
        let slow = try daemon.orchctl(["submit", "--timeout", "3s", "--shell", script(timed.path)]).line
        #expect(timed.read() == "go")
        #expect(try daemon.orchctl(["suspend", slow]).status == 0)
        #expect(try daemon.orchctl(["wait", slow]).status == 124)
        #expect(try daemon.orchctl(["logs", slow]).standardOutput == "got TERM\n")
    }

    @Test("another Varlink client's bad requests are refused with a named error, and orchd goes on")
    func badRequestsOverVarlink() throws {
        let daemon = try TestDaemon()
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        func refusal<P, R>(_ method: VarlinkMethod<P, R>, _ parameters: P) -> String? {
            do {
                _ = try client.call(method, parameters)
                return nil
            } catch .remote(let error) {
                return error.name
            } catch {
                return "\(error)"
            }
        }
        let invalid = "org.varlink.service.InvalidParameter"
        #expect(refusal(JobsInterface.cancelMatching, .init()) == invalid, "no filter would cancel everything")
        #expect(refusal(JobsInterface.cancelMatching, .init(state: "finished")) == invalid)
        #expect(refusal(JobsInterface.cancelMatching, .init(state: "queued", signal: "STOP")) == invalid)
        #expect(refusal(JobsInterface.cancel, .init(ids: [JobID(rawValue: 1)], signal: "bogus")) == invalid)
        #expect(refusal(JobsInterface.edit, .init(id: JobID(rawValue: 1))) == invalid, "nothing to change")
        #expect(refusal(JobsInterface.edit, .init(id: JobID(rawValue: 1), notBefore: "tomorrow")) == invalid)
        #expect(refusal(JobsInterface.edit, .init(id: JobID(rawValue: 1), priority: 1)) == JobsInterface.Errors.noSuchJob)
        #expect(refusal(JobsInterface.hold, .init(ids: [])) == invalid)
        #expect(refusal(JobsInterface.suspend, .init(id: JobID(rawValue: 1))) == JobsInterface.Errors.noSuchJob)
        #expect(refusal(QueuesInterface.remove, .init(name: .default)) == QueuesInterface.Errors.queueNotRemovable)
        #expect(refusal(QueuesInterface.add, .init(name: .default)) == QueuesInterface.Errors.queueExists)
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("cancel of several running jobs tears them down together, and reports a job it may not cancel without holding back the others")
    func cancelSeveral() throws {
        // A long grace: a teardown one job after the other would SIGKILL the first job before
        // the others got SIGTERM, and no job would exit by itself.
        let daemon = try TestDaemon(concurrency: 4, arguments: ["--kill-grace", "120s"])
        let marks = daemon.directory + "/marks"
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true)
        var ids: [String] = []
        for index in 0..<3 {
            let started = try ReadyMarker(path: daemon.directory + "/started.\(index)")
            // On SIGTERM: mark it, then exit only once every job got its SIGTERM.
            let script = "trap 'touch \(marks)/term.\(index); "
                + "while [ $(ls \(marks) | grep -c term) -lt 3 ]; do sleep 0.05; done; touch \(marks)/done.\(index); exit 0' TERM; "
                + "echo up > '\(started.path)'; while :; do sleep 0.1; done"
            ids.append(try daemon.orchctl(["submit", "--", "sh", "-c", script]).line)
            #expect(started.read() == "up")
        }
        let finished = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        let cancelled = try daemon.orchctl(["cancel", ids[0], finished, ids[1], ids[2], ids[0]])
        #expect(cancelled.status == 1, "\(cancelled)")
        #expect(cancelled.standardError.contains("job \(finished) "), "\(cancelled)")
        #expect(cancelled.standardOutput == ids.map { "cancelled \($0)\n" }.joined(), "\(cancelled)")
        for index in 0..<3 {
            #expect(FileManager.default.fileExists(atPath: "\(marks)/done.\(index)"), "job \(ids[index]) exited by itself")
        }
    }
}
