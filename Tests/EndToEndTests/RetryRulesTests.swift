import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// `retry` and `cancel` follow the job state machine's rules end to end: dependencies, start
/// times, unique keys and paused queues hold for a retried job as for a new one.
@Suite("Retry and cancel rules end to end")
struct RetryRulesTests {
    private func job(_ daemon: TestDaemon, _ id: String) throws -> [String: Any] {
        let shown = try daemon.orchctl(["show", id, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any], "\(shown)")
    }

    private func state(_ daemon: TestDaemon, _ id: String) throws -> String? {
        try job(daemon, id)["state"] as? String
    }

    /// A FIFO a job blocks on (`cat gate`) until the test opens it.
    private func makeGate(_ daemon: TestDaemon, _ name: String) throws -> String {
        let path = daemon.directory + "/" + name
        try #require(mkfifo(path, 0o600) == 0)
        return path
    }

    private func open(gate path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do { try release(gate: path) } catch { Issue.record(error, sourceLocation: sourceLocation) }
    }

    @Test("attempts retried after a backoff of a millisecond all run while clients keep orchd busy: none is left waiting")
    func shortBackoffsAllRun() throws {
        // A start that came while the wake-up timer's handler queued the due jobs was neither
        // queued by it nor looked for afterwards, and its job waited for ever (about 1 round in
        // 6 of this shape with a release build, driven from Python; more rarely from here).
        for round in 1...8 {
            let daemon = try TestDaemon(concurrency: 1)
            #expect(try daemon.orchctl(["queue", "set", "default", "--retry-base", "1ms", "--retry-cap", "2ms"]).status == 0)
            let socket = daemon.socketPath
            let succeeds = JobSpec(command: .argv(["true"]), cwd: "/", environment: ["PATH": "/usr/bin:/bin"])
            let retried = JobSpec(command: .argv(["false"]), cwd: "/", environment: ["PATH": "/usr/bin:/bin"], maxAttempts: 2)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                guard let client = try? VarlinkClient.limited(socketPath: socket) else { return }
                for index in 0..<30 {
                    _ = try? client.call(JobsInterface.submit, JobsInterface.SubmitParameters(spec: index.isMultiple(of: 2) ? succeeds : retried))
                }
            }
            let drained = try daemon.orchctl(["wait", "--queue", "default", "--drained", "--timeout", "60s"])
            let queues = try daemon.orchctl(["queues"]).standardOutput
            #expect(drained.status == 0, "round \(round): \(queues)")
        }
    }

    @Test("a cancelled job retried while its dependency still runs waits for it, then runs after it")
    func retryWaitsForRunningDependency() throws {
        let daemon = try TestDaemon()
        let records = daemon.directory + "/records"
        let gate = try makeGate(daemon, "gate")
        let started = try ReadyMarker(path: daemon.directory + "/started")
        #expect(try daemon.orchctl(["queue", "add", "wide", "--concurrency", "4"]).status == 0)
        let a = try daemon.orchctl([
            "submit", "--queue", "wide", "--shell", "echo go > '\(started.path)'; cat '\(gate)' >/dev/null; echo A >> '\(records)'",
        ]).line
        #expect(started.read() != nil)
        let b = try daemon.orchctl(["submit", "--queue", "wide", "--after", a, "--shell", "echo B >> '\(records)'"]).line
        #expect(try daemon.orchctl(["cancel", b]).status == 0)
        let retried = try daemon.orchctl(["retry", b])
        #expect(retried.status == 0, "\(retried)")
        #expect(try state(daemon, b) == "waiting", "a free slot does not start it while job \(a) runs")
        #expect(try state(daemon, a) == "running")
        open(gate: gate)
        #expect(try daemon.orchctl(["wait", b]).status == 0)
        #expect(try String(contentsOfFile: records, encoding: .utf8) == "A\nB\n")
        let events = try daemon.orchctl(["events", "--since", "0", "--job", b]).standardOutput
        let kinds = events.split(separator: "\n").compactMap { line -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["kind"] as? String
        }
        #expect(kinds == ["submitted", "cancelled", "requeued", "queued", "started", "finished"], "\(events)")
    }

    @Test("a queued dependent of a retried job waits for its new attempt and follows its outcome",
          arguments: [false, true])
    func queuedDependentWaitsForRetriedDependency(secondAttemptSucceeds: Bool) throws {
        let daemon = try TestDaemon()
        let records = daemon.directory + "/records"
        let gate = try makeGate(daemon, "gate")
        let second = daemon.directory + "/second"
        let started = try ReadyMarker(path: daemon.directory + "/started")
        // The first attempt succeeds at once; the second waits at the gate, then ends so.
        let a = try daemon.orchctl([
            "submit", "--shell",
            "if [ -e '\(second)' ]; then echo go > '\(started.path)'; cat '\(gate)' >/dev/null; echo A2 >> '\(records)'; "
                + "exit \(secondAttemptSucceeds ? 0 : 3); fi; echo A1 >> '\(records)'",
        ]).line
        #expect(try daemon.orchctl(["wait", a]).status == 0)
        #expect(try daemon.orchctl(["queue", "add", "io"]).status == 0)
        #expect(try daemon.orchctl(["pause", "io"]).status == 0)
        let b = try daemon.orchctl(["submit", "--queue", "io", "--after", a, "--shell", "echo B >> '\(records)'"]).line
        #expect(try state(daemon, b) == "queued", "job \(a) has succeeded")
        #expect(FileManager.default.createFile(atPath: second, contents: nil))
        let retried = try daemon.orchctl(["retry", a])
        #expect(retried.status == 0, "\(retried)")
        #expect(try state(daemon, b) == "waiting", "job \(b) has not started: it waits for job \(a) again")
        #expect(started.read() != nil)
        #expect(try daemon.orchctl(["resume", "io"]).status == 0)
        #expect(try state(daemon, b) == "waiting", "a free slot does not start it while job \(a) runs")
        open(gate: gate)
        #expect(try daemon.orchctl(["wait", a]).status == (secondAttemptSucceeds ? 0 : 3))
        let waited = try daemon.orchctl(["wait", b])
        if secondAttemptSucceeds {
            #expect(waited.status == 0, "\(waited)")
            #expect(try String(contentsOfFile: records, encoding: .utf8) == "A1\nA2\nB\n")
        } else {
            #expect(waited.status == 1, "\(waited)")
            #expect(try job(daemon, b)["result"] as? String == "dependency_failed")
            #expect(try String(contentsOfFile: records, encoding: .utf8) == "A1\nA2\n", "job \(b) never ran")
        }
        let counts = try daemon.orchctl(["queues", "--json"]).standardOutput
        #expect(!counts.contains(#""waiting":1"#) && !counts.contains(#""queued":1"#), "the counts followed: \(counts)")
    }

    @Test("retry is refused, naming the dependency and its result, when a dependency failed or was cancelled")
    func retryRefusedForFailedDependency() throws {
        let daemon = try TestDaemon()
        let flag = daemon.directory + "/flag"
        let a = try daemon.orchctl(["submit", "--", "test", "-e", flag]).line
        let b = try daemon.orchctl(["submit", "--after", a, "--", "true"]).line
        #expect(try daemon.orchctl(["wait", b]).status == 1)
        let refused = try daemon.orchctl(["retry", b])
        #expect(refused.status == 1)
        #expect(refused.standardError == "Error: job \(b) cannot be retried: its dependency, job \(a), finished failed; retry job \(a) first\n", "\(refused)")
        #expect(try job(daemon, b)["result"] as? String == "dependency_failed", "a refused retry changes nothing")

        // Once the dependency runs again, the dependent may be retried: it waits for it.
        _ = FileManager.default.createFile(atPath: flag, contents: nil)
        let gate = try makeGate(daemon, "gate")
        try #require(daemon.orchctl(["queue", "set", "default", "--concurrency", "1"]).status == 0)
        let blocker = try daemon.orchctl(["submit", "--", "cat", gate]).line
        #expect(try daemon.orchctl(["retry", a]).status == 0)
        #expect(try daemon.orchctl(["retry", b]).status == 0)
        #expect(try state(daemon, b) == "waiting")
        open(gate: gate)
        #expect(try daemon.orchctl(["wait", blocker, a, b]).status == 0)

        let c = try daemon.orchctl(["submit", "--", "cat", gate]).line
        let d = try daemon.orchctl(["submit", "--after", c, "--", "true"]).line
        #expect(try daemon.orchctl(["cancel", c]).status == 0)
        #expect(try job(daemon, d)["result"] as? String == "dependency_failed")
        let cancelled = try daemon.orchctl(["retry", d])
        #expect(cancelled.status == 1)
        #expect(cancelled.standardError.contains("its dependency, job \(c), finished cancelled"), "\(cancelled)")
    }

    @Test("retry is refused with DependencyNotSucceeded over Varlink, and when a dependency was pruned")
    func retryRefusedForPrunedDependency() throws {
        let daemon = try TestDaemon()
        let a = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        let b = try daemon.orchctl(["submit", "--wait", "--after", a, "--", "true"]).line
        // c keeps b from being pruned; nothing keeps a.
        let c = try daemon.orchctl(["submit", "--after", b, "--delay", "1h", "--", "true"]).line
        #expect(try daemon.orchctl(["prune", "--all"]).status == 0)
        #expect(try daemon.orchctl(["show", a]).status == 1, "a was pruned")
        #expect((try job(daemon, b)["after"] as? [Int]) == [Int(a) ?? 0], "b still names its pruned dependency")
        let refused = try daemon.orchctl(["retry", b])
        #expect(refused.status == 1)
        #expect(refused.standardError == "Error: job \(b) cannot be retried: its dependency, job \(a), was pruned, so whether it succeeded is unknown\n", "\(refused)")

        let socket = try RawSocket(path: daemon.socketPath)
        socket.send(Array(#"{"method":"io.orchd.Jobs.Retry","parameters":{"id":\#(b)}}"#.utf8) + [0])
        let reply = try #require(socket.readMessages(untilClosed: false).messages.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
        #expect(object["error"] as? String == "io.orchd.Jobs.DependencyNotSucceeded", "\(reply)")
        let parameters = object["parameters"] as? [String: Any]
        #expect(parameters?["id"] as? Int == Int(b) && parameters?["dependency"] as? Int == Int(a), "\(reply)")
        #expect(parameters?["result"] == nil, "no result: the dependency is gone")
        #expect(try daemon.orchctl(["cancel", c]).status == 0)
    }

    @Test("retry is refused while another live job holds the unique key")
    func retryRefusedForHeldKey() throws {
        let daemon = try TestDaemon()
        let first = try daemon.orchctl(["submit", "--wait", "--unique", "nightly", "--", "true"]).line
        let second = try daemon.orchctl(["submit", "--unique", "nightly", "--", "sleep", "30"]).line
        let refused = try daemon.orchctl(["retry", first])
        #expect(refused.status == 1)
        #expect(refused.standardError == "Error: job \(second) with unique key 'nightly' has not finished yet (wait for it: orchctl wait \(second); a submit with --reuse answers with its ID instead)\n", "\(refused)")
        #expect(try daemon.orchctl(["cancel", second]).status == 0)
        #expect(try daemon.orchctl(["retry", first]).status == 0, "the key is free again")
        #expect(try daemon.orchctl(["wait", first]).status == 0)
    }

    @Test("a retried job keeps a start time still ahead, and a paused queue stays paused")
    func retryKeepsStartTimeAndPause() throws {
        let daemon = try TestDaemon()
        let delayed = try daemon.orchctl(["submit", "--delay", "1h", "--", "true"]).line
        #expect(try daemon.orchctl(["cancel", delayed]).status == 0)
        #expect(try daemon.orchctl(["retry", delayed]).status == 0)
        let shown = try job(daemon, delayed)
        #expect(shown["state"] as? String == "waiting" && shown["notBefore"] != nil, "\(shown)")
        #expect(try daemon.orchctl(["cancel", delayed]).status == 0)

        #expect(try daemon.orchctl(["queue", "add", "held"]).status == 0)
        let id = try daemon.orchctl(["submit", "--wait", "--queue", "held", "--", "true"]).line
        #expect(try daemon.orchctl(["pause", "held"]).status == 0)
        #expect(try daemon.orchctl(["retry", id]).status == 0)
        #expect(try state(daemon, id) == "queued")
        let queues = try daemon.orchctl(["queues", "--json"]).standardOutput
        #expect(queues.contains("\"paused\" : true"), "\(queues)")
        #expect(try daemon.orchctl(["resume", "held"]).status == 0)
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try job(daemon, id)["attempt"] as? Int == 2)
    }

    @Test("retry of a job not finished, and cancel of a finished one (a second cancel too), are refused and change nothing")
    func refusalsByState() throws {
        let daemon = try TestDaemon(concurrency: 1)
        let running = try daemon.orchctl(["submit", "--", "sleep", "30"]).line
        let queued = try daemon.orchctl(["submit", "--", "sleep", "30"]).line
        let waiting = try daemon.orchctl(["submit", "--delay", "1h", "--", "true"]).line
        for id in [running, queued, waiting] {
            let refused = try daemon.orchctl(["retry", id])
            #expect(refused.status == 1)
            #expect(refused.standardError == "Error: job \(id) has not finished; only a finished job can be retried\n", "\(refused)")
        }
        #expect(try state(daemon, running) == "running" && state(daemon, queued) == "queued" && state(daemon, waiting) == "waiting")
        // The queued one first: cancelling the running one frees the slot it would take.
        #expect(try daemon.orchctl(["cancel", queued, waiting, running]).status == 0)
        let again = try daemon.orchctl(["cancel", running])
        #expect(again.status == 1)
        #expect(again.standardError == "Error: job \(running) has already finished\n", "\(again)")
        #expect(try job(daemon, running)["result"] as? String == "cancelled")
    }
}
