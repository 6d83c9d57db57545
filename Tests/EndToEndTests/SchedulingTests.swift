import Foundation
import Glibc
import Orchestrator
import OrchestratorAPI
import Testing
import TestWaitLimits

/// Queues, priorities, dependencies, time limits, retries and crash recovery, end to end.
@Suite("Scheduling end to end")
struct SchedulingTests {
    /// Lines a set of jobs appended to one file (each line one small O_APPEND write).
    private func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    private func job(_ daemon: TestDaemon, _ id: String) throws -> [String: Any] {
        let shown = try daemon.orchctl(["show", id, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any], "\(shown)")
    }

    @Test("priorities start highest first, FIFO among equals, once the paused queue resumes")
    func priorities() throws {
        let daemon = try TestDaemon()
        let records = daemon.directory + "/order"
        #expect(try daemon.orchctl(["queue", "add", "work", "--concurrency", "1"]).status == 0)
        #expect(try daemon.orchctl(["pause", "work"]).status == 0)
        var ids: [String] = []
        for (label, priority) in [("p0", 0), ("p5a", 5), ("p1", 1), ("p5b", 5)] {
            ids.append(try daemon.orchctl([
                "submit", "--queue", "work", "--priority", String(priority), "--shell", "echo \(label) >> '\(records)'",
            ]).line)
        }
        #expect(!FileManager.default.fileExists(atPath: records), "a paused queue starts nothing")
        #expect(try daemon.orchctl(["resume", "work"]).status == 0)
        #expect(try daemon.orchctl(["wait"] + ids).status == 0)
        #expect(try lines(records) == ["p5a", "p5b", "p1", "p0"])
    }

    @Test("raising a queue's concurrency starts more at once; lowering it starts none until few enough run")
    func concurrencyAtRunTime() throws {
        let daemon = try TestDaemon()
        let records = daemon.directory + "/records"
        #expect(try daemon.orchctl(["queue", "add", "q", "--concurrency", "1"]).status == 0)
        // Jobs 1-3 say they started, then block until the test opens their gate (a FIFO).
        var markers: [ReadyMarker] = []
        var gates: [String] = []
        var ids: [String] = []
        for index in 0..<3 {
            markers.append(try ReadyMarker(path: daemon.directory + "/started\(index)"))
            gates.append(daemon.directory + "/gate\(index)")
            try #require(mkfifo(gates[index], 0o600) == 0)
            ids.append(try daemon.orchctl([
                "submit", "--queue", "q", "--shell", "echo go > '\(markers[index].path)'; cat '\(gates[index])' >/dev/null",
            ]).line)
        }
        for _ in 3..<6 {
            ids.append(try daemon.orchctl(["submit", "--queue", "q", "--shell", "echo start >> '\(records)'; sleep 0.2; echo end >> '\(records)'"]).line)
        }
        func state(_ id: String) throws -> String? { try job(daemon, id)["state"] as? String }
        func open(gate index: Int) throws {
            try release(gate: gates[index])
            #expect(try daemon.orchctl(["wait", ids[index]]).status == 0)
        }

        #expect(markers[0].read() != nil)
        #expect(try state(ids[1]) == "queued", "concurrency 1: one at a time")
        #expect(try daemon.orchctl(["queue", "set", "q", "--concurrency", "3"]).status == 0)
        #expect(markers[1].read() != nil && markers[2].read() != nil, "raised to 3: two more start at once")
        #expect(try state(ids[3]) == "queued")

        #expect(try daemon.orchctl(["queue", "set", "q", "--concurrency", "1"]).status == 0)
        try open(gate: 1)
        #expect(try state(ids[3]) == "queued", "two still run, more than the new limit: no start")
        try open(gate: 2)
        #expect(try state(ids[3]) == "queued", "one still runs, as many as the limit: no start")
        try open(gate: 0)
        #expect(try daemon.orchctl(["wait"] + ids).status == 0)
        var running = 0
        var most = 0
        for line in try lines(records) {
            running += line == "start" ? 1 : -1
            most = max(most, running)
        }
        #expect(most == 1, "the rest ran one at a time")
        for id in ids.prefix(3) {
            #expect(try job(daemon, id)["result"] as? String == "succeeded", "nothing was killed")
        }
    }

    @Test("a failed job fails its whole chain of dependents without starting them")
    func dependencyChain() throws {
        let daemon = try TestDaemon()
        let ran = daemon.directory + "/ran"
        let a = try daemon.orchctl(["submit", "--", "sh", "-c", "exit 1"]).line
        let b = try daemon.orchctl(["submit", "--after", a, "--", "touch", ran]).line
        let c = try daemon.orchctl(["submit", "--after", b, "--", "touch", ran]).line
        #expect(try daemon.orchctl(["wait", c]).status == 1)
        for (id, dependency) in [(b, a), (c, b)] {
            let shown = try job(daemon, id)
            #expect(shown["result"] as? String == "dependency_failed")
            #expect((shown["failedDependency"] as? Int).map(String.init) == dependency)
            #expect(shown["startedAt"] is NSNull, "never started")
        }
        #expect(!FileManager.default.fileExists(atPath: ran))
        // Depending on an already failed job fails at once; an unknown ID is a submit error.
        let late = try daemon.orchctl(["submit", "--after", a, "--", "true"]).line
        #expect(try job(daemon, late)["result"] as? String == "dependency_failed")
        let unknown = try daemon.orchctl(["submit", "--after", "9999", "--", "true"])
        #expect(unknown.status != 0)
        #expect(unknown.standardError.contains("9999"), "\(unknown)")
    }

    @Test("a chain of 5,000 --after links fails link by link, 250 a turn, when its head is cancelled, and orchd stays up")
    func longDependencyChain() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause"]).status == 0)
        // One Submit per link on one connection: a batch cannot name its own jobs.
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        let head = try #require(JobID(parsing: try daemon.orchctl(["submit", "--", "true"]).line))
        var chain: [JobID] = []
        for _ in 0..<5_000 {
            let spec = JobSpec(command: .argv(["true"]), cwd: "/", environment: [:], after: [chain.last ?? head])
            chain.append(try client.call(JobsInterface.submit, JobsInterface.SubmitParameters(spec: spec)).job.id)
        }
        // Each failed link fails the next: it once recursed per link and overflowed the stack.
        // 250 links a turn, so the cancel may answer before the last link has failed.
        let cancelled = try daemon.orchctl(["cancel", head.description])
        #expect(cancelled.status == 0, "\(cancelled)")
        #expect(try daemon.orchctl(["wait", chain[chain.count - 1].description]).status == 1)
        let last = try job(daemon, chain[chain.count - 1].description)
        #expect(last["result"] as? String == "dependency_failed" && (last["failedDependency"] as? Int).map(Int64.init) == chain[chain.count - 2].rawValue, "\(last)")
        let counts = try daemon.orchctl(["status"]).standardOutput.split(separator: "\n").first { $0.contains(" running, ") }
        #expect(counts == "0 running, 0 queued, 5,001 finished", "\(counts ?? "")")
        #expect(daemon.process?.isRunning == true)
    }

    @Test("a dependency retried while its dependents are being failed, and succeeding, leaves those not reached yet waiting for their other dependency")
    func retryDuringDependentsCascade() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "q"]).status == 0)
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let ok = daemon.directory + "/ok"
        let root = try daemon.orchctl(["submit", "--queue", "q", "--shell", "test -e '\(ok)'"]).line
        let other = try daemon.orchctl(["submit", "--", "true"]).line
        // The root's first dependent has 8,000 of its own, failed first (depth first), 250 a
        // turn; the jobs that also wait for `other` come after them.
        let first = try daemon.orchctl(["submit", "--after", root, "--", "true"]).line
        let fanOut = String(repeating: "{\"argv\": [\"true\"], \"after\": [\(first)]}\n", count: 8_000)
        #expect(try daemon.orchctl(["submit", "--batch", "-"], input: fanOut).status == 0)
        let line = "{\"argv\": [\"true\"], \"after\": [\(root), \(other)]}\n"
        let both = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: line, count: 300))
            .standardOutput.split(separator: "\n").map(String.init)
        #expect(both.count == 300)
        #expect(try daemon.orchctl(["cancel", root]).status == 0)
        #expect(FileManager.default.createFile(atPath: ok, contents: nil))
        #expect(try daemon.orchctl(["retry", root]).status == 0)
        #expect(try daemon.orchctl(["resume", "q"]).status == 0)
        #expect(try daemon.orchctl(["wait", root]).status == 0)
        let rerun = try #require(try job(daemon, root)["startedAt"] as? String)
        // A stop finishes the cascade before orchd exits; `other` is still queued (paused).
        #expect(daemon.stop() == 0)
        try daemon.start()
        // Each still waits for `other`, or was failed before the root's second attempt began:
        // never after that attempt had succeeded (however far the cascade had got by then).
        for id in both {
            let shown = try job(daemon, id)
            let result = shown["result"] as? String
            let finishedAt = shown["finishedAt"] as? String ?? ""
            #expect(shown["state"] as? String == "waiting" || (result == "dependency_failed" && finishedAt <= rerun), "job \(id): \(shown); root rerun at \(rerun)")
        }
    }

    @Test("a successful dependency lets the dependent run")
    func dependencySuccess() throws {
        let daemon = try TestDaemon()
        let a = try daemon.orchctl(["submit", "--", "sh", "-c", "echo a > '\(daemon.directory)/a'"]).line
        let b = try daemon.orchctl(["submit", "--after", a, "--", "cat", daemon.directory + "/a"]).line
        #expect(try daemon.orchctl(["wait", b]).status == 0)
        #expect(try daemon.orchctl(["logs", b]).standardOutput == "a\n")
    }

    @Test("--timeout tears down a job that ignores SIGTERM: result timed_out, nothing left")
    func timeout() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--timeout", "1s", "--", "sh", "-c", "trap '' TERM; echo $$ > '\(marker.path)'; sleep 100"]).line
        let group = try #require(marker.read().flatMap { Int32($0) })
        #expect(try daemon.orchctl(["wait", id]).status == 124)
        #expect(try job(daemon, id)["result"] as? String == "timed_out")
        #expect(ProcessGroup(id: group).isGone)
    }

    @Test("--retries 2 on a command that fails twice then succeeds: three attempts, succeeded")
    func retries() throws {
        let daemon = try TestDaemon()
        let counter = daemon.directory + "/count"
        try #require(daemon.orchctl(["queue", "set", "default", "--retry-base", "10ms", "--retry-cap", "50ms"]).status == 0)
        let script = "n=$(cat '\(counter)' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '\(counter)'; [ $n -ge 3 ]"
        let id = try daemon.orchctl(["submit", "--retries", "2", "--shell", script]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        let shown = try job(daemon, id)
        #expect(shown["attempt"] as? Int == 3)
        #expect(shown["result"] as? String == "succeeded")
        let attempts = try #require(shown["attempts"] as? [[String: Any]])
        #expect(attempts.map { $0["result"] as? String } == ["failed", "failed", "succeeded"])
    }

    @Test("a retry whose backoff is over before its wake-up is armed still runs (a 1 µs retry base)")
    func retryDueAtOnce() throws {
        let daemon = try TestDaemon()
        try #require(daemon.orchctl(["queue", "set", "default", "--retry-base", "1us", "--retry-cap", "1us"]).status == 0)
        let id = try daemon.orchctl(["submit", "--retries", "2", "--", "false"]).line
        // Before the fix the job stayed waiting for ever: its start had passed when the
        // wake-up timer was armed, and only later starts arm it.
        #expect(try daemon.orchctl(["wait", id, "--timeout", "60s"]).status == 1)
        let attempts = try #require(try job(daemon, id)["attempts"] as? [[String: Any]])
        #expect(attempts.map { $0["result"] as? String } == ["failed", "failed", "failed"])
    }

    @Test("retry runs a finished job again under the same ID")
    func retryCommand() throws {
        let daemon = try TestDaemon()
        let flag = daemon.directory + "/flag"
        let id = try daemon.orchctl(["submit", "--", "test", "-e", flag]).line
        #expect(try daemon.orchctl(["wait", id]).status == 1)
        _ = FileManager.default.createFile(atPath: flag, contents: nil)
        #expect(try daemon.orchctl(["retry", id]).status == 0)
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try job(daemon, id)["attempt"] as? Int == 2)
        #expect(try daemon.orchctl(["retry", "4242"]).status == 1)
    }

    @Test("--delay keeps a job waiting, then it runs on its own")
    func delay() throws {
        let daemon = try TestDaemon()
        let before = Date()
        let id = try daemon.orchctl(["submit", "--delay", "1s", "--", "true"]).line
        let waiting = try job(daemon, id)
        #expect(waiting["state"] as? String == "waiting")
        // orchctl sets the start a second after its own clock reading, taken after `before`
        // (orchd's submittedAt may come later on a loaded machine): no timing is assumed.
        // Times are kept to the millisecond.
        let notBefore = try #require((waiting["notBefore"] as? String).flatMap(Timestamp.parse))
        #expect(notBefore >= before.addingTimeInterval(0.999), "a second after the submit began")
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 0)
        #expect(waited.standardError.isEmpty, "a start a second ahead is not worth a note: \(waited)")
        let started = try #require((try job(daemon, id)["startedAt"] as? String).flatMap(Timestamp.parse))
        #expect(started >= notBefore, "it started no earlier than asked")
    }

    @Test("wait names on standard error, as it begins, each awaited job that may not start for over a minute (--delay, --at, a retry backoff); standard output stays as it was")
    func waitNamesLateStarts() throws {
        let daemon = try TestDaemon()
        let tomorrow = ISO8601DateFormatter().string(from: Date().addingTimeInterval(30 * 3_600))

        let later = try daemon.orchctl(["submit", "--delay", "2h", "--", "true"]).line
        let atTime = try daemon.orchctl(["submit", "--at", tomorrow, "--", "true"]).line
        let soon = try daemon.orchctl(["submit", "--delay", "30s", "--", "true"]).line
        let wait = try OrchctlStream(daemon, ["wait", later, atTime, soon], captureErrors: true)
        defer { wait.stop() }
        let first = try #require(wait.nextErrorLine())
        #expect(first.hasPrefix("orchctl: waiting for job \(later), which may start no sooner than ") && first.hasSuffix(" (in 2h)"), "\(first)")
        let second = try #require(wait.nextErrorLine())
        #expect(second.hasPrefix("orchctl: waiting for job \(atTime), which may start no sooner than 20") && second.hasSuffix(" (in 1d 6h)"), "\(second)")
        #expect(try daemon.orchctl(["cancel", later, atTime, soon]).status == 0)
        #expect(wait.rest() == "\(later) cancelled\n\(atTime) cancelled\n\(soon) cancelled\n")
        #expect(wait.exitStatus() == 1)
        #expect(wait.nextErrorLine() == nil, "one note per job, and none for the job 30s away")

        // A job it cannot wait for: the error alone.
        let missing = try daemon.orchctl(["wait", try daemon.orchctl(["submit", "--delay", "2h", "--", "true"]).line, "9999"])
        #expect(missing.status == 1)
        #expect(missing.standardError == "Error: no job with ID 9999\n", "\(missing)")

        // --all: a retry backoff of minutes too; it still prints nothing on standard output.
        #expect(try daemon.orchctl(["queue", "add", "slow", "--retry-base", "10min"]).status == 0)
        let retrying = try daemon.orchctl(["submit", "--queue", "slow", "--retries", "1", "--", "false"]).line
        #expect(daemon.waitForLog(containing: "job \(retrying) attempt 1 ended: failed(1); will retry"), "\(daemon.daemonLog)")
        let all = try OrchctlStream(daemon, ["wait", "--all"], captureErrors: true)
        defer { all.stop() }
        let delayed = try #require(all.nextErrorLine())
        #expect(delayed.hasPrefix("orchctl: waiting for job \(Int(later)! + 3), which may start no sooner than "), "\(delayed)")
        let backoff = try #require(all.nextErrorLine())
        #expect(backoff.hasPrefix("orchctl: waiting for job \(retrying), which may start no sooner than "), "\(backoff)")
        #expect(try daemon.orchctl(["cancel", "--state", "waiting"]).status == 0)
        #expect(all.rest() == "")
        #expect(all.exitStatus() == 1)
        #expect(all.nextErrorLine() == nil)
    }

    @Test("wait, wait --all, wait --queue Q --drained and submit --wait say on standard error, as they begin, that an awaited job's queue is paused; resuming it ends the wait as usual")
    func waitNamesPausedQueues() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "io"]).status == 0)
        #expect(try daemon.orchctl(["pause", "io"]).status == 0)
        let first = try daemon.orchctl(["submit", "--queue", "io", "--", "true"]).line
        let second = try daemon.orchctl(["submit", "--queue", "io", "--", "true"]).line
        let open = try daemon.orchctl(["submit", "--", "sleep", "60"]).line
        let resume = "('orchctl resume io')"

        let one = try OrchctlStream(daemon, ["wait", first], captureErrors: true)
        defer { one.stop() }
        #expect(one.nextErrorLine() == "orchctl: queue io is paused, so job \(first) starts only once it is resumed \(resume)")
        let both = try OrchctlStream(daemon, ["wait", first, second, open], captureErrors: true)
        defer { both.stop() }
        #expect(both.nextErrorLine() == "orchctl: queue io is paused, so 2 awaited jobs start only once it is resumed \(resume)")
        let all = try OrchctlStream(daemon, ["wait", "--all"], captureErrors: true)
        defer { all.stop() }
        #expect(all.nextErrorLine() == "orchctl: queue io is paused, so 2 awaited jobs start only once it is resumed \(resume)")
        let drained = try OrchctlStream(daemon, ["wait", "--queue", "io", "--drained"], captureErrors: true)
        defer { drained.stop() }
        #expect(drained.nextErrorLine() == "orchctl: queue io is paused and 2 of its jobs have not started: it drains only once it is resumed \(resume)")
        let submitted = try OrchctlStream(daemon, ["submit", "--wait", "--queue", "io", "--", "sh", "-c", "exit 3"], captureErrors: true)
        defer { submitted.stop() }
        let third = try #require(submitted.nextLine())
        #expect(submitted.nextErrorLine() == "orchctl: queue io is paused, so job \(third) starts only once it is resumed \(resume)")

        #expect(try daemon.orchctl(["resume", "io"]).status == 0)
        #expect(one.rest() == "\(first) succeeded\n")
        #expect(one.exitStatus() == 0)
        #expect(drained.rest() == "")
        #expect(drained.exitStatus() == 0)
        #expect(submitted.rest() == "")
        #expect(submitted.exitStatus() == 3)
        #expect(try daemon.orchctl(["cancel", open]).status == 0)
        #expect(both.exitStatus() == 1)
        #expect(all.exitStatus() == 1)
        for stream in [one, both, all, drained, submitted] { #expect(stream.nextErrorLine() == nil, "one note, once") }

        // An open queue, or a job already running: nothing is said.
        let quiet = try daemon.orchctl(["submit", "--wait", "--queue", "io", "--", "true"])
        #expect(quiet.status == 0 && quiet.standardError.isEmpty, "\(quiet)")
        let drainedAtOnce = try daemon.orchctl(["wait", "--queue", "io", "--drained"])
        #expect(drainedAtOnce.status == 0 && drainedAtOnce.standardError.isEmpty, "\(drainedAtOnce)")
    }

    @Test("--unique refuses a second live job with the key, or returns it with --reuse")
    func uniqueness() throws {
        let daemon = try TestDaemon()
        let first = try daemon.orchctl(["submit", "--unique", "backup", "--", "sleep", "30"]).line
        let second = try daemon.orchctl(["submit", "--unique", "backup", "--", "sleep", "30"])
        #expect(second.status == 1)
        #expect(second.standardError.contains(first), "\(second)")
        #expect(try daemon.orchctl(["submit", "--unique", "backup", "--reuse", "--", "sleep", "30"]).line == first)
        #expect(try daemon.orchctl(["cancel", first]).status == 0)
        #expect(try daemon.orchctl(["submit", "--unique", "backup", "--", "true"]).status == 0, "a finished job frees its key")
    }

    @Test("prune --all deletes finished jobs with their logs, never one a live job depends on; a bare prune is refused")
    func prune() throws {
        let daemon = try TestDaemon()
        let done = try daemon.orchctl(["submit", "--wait", "--", "echo", "x"]).line
        let needed = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        let dependent = try daemon.orchctl(["submit", "--after", needed, "--delay", "1h", "--", "true"]).line
        let bare = try daemon.orchctl(["prune"])
        #expect(bare.status == 64, "a bare prune is refused: \(bare)")
        #expect(bare.standardError.contains("give --older-than SPAN, or --all"), "\(bare)")
        #expect(try daemon.orchctl(["prune", "--all", "--older-than", "1d"]).status == 64)
        #expect(try daemon.orchctl(["show", done]).status == 0, "nothing was pruned")
        let pruned = try daemon.orchctl(["prune", "--all"])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(try daemon.orchctl(["show", done]).status == 1)
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/logs/0/\(done).1.out"))
        #expect(try daemon.orchctl(["show", needed]).status == 0)
        #expect(try daemon.orchctl(["cancel", dependent]).status == 0)
    }

    @Test("kill -9 with 2 running and 10 queued: after restart every job ends exactly once, nothing left over")
    func crashWithRunningAndQueued() throws {
        let daemon = try TestDaemon(concurrency: 2)
        let records = daemon.directory + "/ran"
        let first = try ReadyMarker(path: daemon.directory + "/first")
        let second = try ReadyMarker(path: daemon.directory + "/second")
        // Two long jobs: one may be retried, one may not.
        let retried = try daemon.orchctl([
            "submit", "--retries", "1", "--shell", "echo r >> '\(records)'; echo $$ > '\(first.path)'; sleep 300",
        ]).line
        let once = try daemon.orchctl(["submit", "--shell", "echo $$ > '\(second.path)'; sleep 300"]).line
        let groups = [first.read(), second.read()].compactMap { $0.flatMap { Int32($0) } }
        #expect(groups.count == 2)
        var queued: [String] = []
        for index in 0..<10 {
            queued.append(try daemon.orchctl(["submit", "--shell", "echo \(index) >> '\(records)'"]).line)
        }
        daemon.crash()
        try daemon.start()
        for group in groups { #expect(ProcessGroup(id: group).isGone, "no leftover process of group \(group)") }
        #expect(try daemon.orchctl(["wait"] + queued).status == 0)
        #expect(try job(daemon, once)["result"] as? String == "interrupted")
        let retriedJob = try job(daemon, retried)
        #expect(retriedJob["state"] as? String != "finished" || retriedJob["result"] as? String != "interrupted",
                "a job with a retry left is retried, not finished as interrupted")
        #expect(try daemon.orchctl(["cancel", retried]).status == 0)
        let ran = try lines(records)
        for index in 0..<10 {
            #expect(ran.filter { $0 == String(index) }.count == 1, "job \(index) ran exactly once")
        }
    }

    @Test("after kill -9, a job whose main process ended while orchd was down still has its survivors killed before any retry")
    func survivorsOfAnExitedLeaderAreKilled() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/survivor")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl([
            "submit", "--retries", "1", "--", "sh", "-c", "sleep 300 & echo $$ > '\(marker.path)'; cat '\(gate)'",
        ]).line
        let group = try #require(marker.read().flatMap { Int32($0) })
        daemon.crash()
        // The leader ends while no daemon runs; its background sleep lives on in the group.
        try release(gate: gate)
        try daemon.start()
        #expect(ProcessGroup(id: group).isGone, "the survivor was killed, so the retry cannot run beside it")
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
    }

    @Test("an absurd timeout or start time is refused at submit and the daemon stays up")
    func absurdTimes() throws {
        let daemon = try TestDaemon()
        let timeout = try daemon.orchctl(["submit", "--timeout", "1000y", "--", "true"])
        #expect(timeout.status != 0 && timeout.standardError.contains("100 years"), "\(timeout)")
        let delay = try daemon.orchctl(["submit", "--delay", "200000y", "--", "true"])
        #expect(delay.status != 0 && delay.standardError.contains("10000"), "\(delay)")
        // The longest accepted timeout does not crash the daemon when the job starts.
        let id = try daemon.orchctl(["submit", "--timeout", "99y", "--", "true"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("--at a date and time that has passed is refused by submit and edit, and stores nothing")
    func pastStartRefused() throws {
        let daemon = try TestDaemon()
        let submitted = try daemon.orchctl(["submit", "--at", "2020-01-06 08:00", "--", "true"])
        #expect(submitted.status == 64 && submitted.standardError.contains("2020-01-06 08:00 has passed"), "\(submitted)")
        #expect(try daemon.orchctl(["status", "--all", "--json"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let id = try daemon.orchctl(["submit", "--delay", "1h", "--", "true"]).line
        let edited = try daemon.orchctl(["edit", id, "--at", "2020-01-06T08:00:00Z"])
        #expect(edited.status == 64 && edited.standardError.contains("has passed; give a time to come, or --delay 0 to let it start now"), "\(edited)")
        #expect(try job(daemon, id)["state"] as? String == "waiting")
    }
}
