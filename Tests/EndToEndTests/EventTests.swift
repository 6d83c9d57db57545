import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// The event log through `orchctl events`, queue drain waits and queue hooks, end to end.
@Suite("Events end to end")
struct EventTests {
    @Test("events --follow started before a submit prints submitted, started, finished in order; --since resumes exactly")
    func followAndResume() throws {
        let daemon = try TestDaemon()
        // A first job, so there is history before the follower starts.
        _ = try daemon.orchctl(["submit", "--wait", "--", "true"])
        let backlog = try daemon.orchctl(["events"])
        let history = try backlog.standardOutput.split(separator: "\n").map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
        let lastSeen = try #require(history.last?.seq)

        let stream = try OrchctlStream(daemon, ["events", "--follow", "--since", String(lastSeen)])
        defer { stream.stop() }
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "exit 4"]).line
        var kinds: [String] = []
        var seqs: [Int64] = []
        while kinds.last != "finished", let event = try stream.nextEvent() {
            if event.jobId?.description == id {
                kinds.append(event.kind.rawValue)
                seqs.append(event.seq)
            }
        }
        #expect(kinds == ["submitted", "started", "finished"])
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "in sequence order, no repeats")
        stream.stop()

        // A follower that died after seeing the first of them, resuming with --since, gets the rest exactly.
        let resumed = try daemon.orchctl(["events", "--since", String(seqs[0]), "--job", id])
        let replayed = try resumed.standardOutput.split(separator: "\n").map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
        #expect(replayed.map(\.seq) == Array(seqs.dropFirst()))
        #expect(replayed.last?.result == "failed" && replayed.last?.exitCode == 4)
    }

    @Test("a job's started event is followed and hooked as soon as it starts, with nothing else happening after it")
    func startedDeliveredAtOnce() throws {
        let daemon = try TestDaemon()
        let hooked = try ReadyMarker(path: daemon.directory + "/hooked")
        #expect(try daemon.orchctl(["queue", "set", "default", "--on", "started=echo $ORCHD_JOB_ID > '\(hooked.path)'"]).status == 0)
        let stream = try OrchctlStream(daemon, ["events", "--follow"])
        defer { stream.stop() }
        let id = try daemon.orchctl(["submit", "--", "sleep", "300"]).line
        var started: Event?
        while started == nil, let event = try stream.nextEvent() {
            if event.jobId?.description == id, event.kind.rawValue == "started" { started = event }
        }
        #expect(started?.attempt == 1, "the follower saw the start")
        #expect(hooked.read()?.trimmingCharacters(in: .whitespacesAndNewlines) == id, "the started hook ran: \(daemon.daemonLog)")
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
    }

    @Test("events --follow --since a sequence number ahead of the log prints only the events after it")
    func followSinceAhead() throws {
        let daemon = try TestDaemon()
        _ = try daemon.orchctl(["submit", "--wait", "--", "true"])
        let history = try daemon.orchctl(["events"]).standardOutput.split(separator: "\n")
            .map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
        let since = try #require(history.last?.seq) + 3
        let stream = try OrchctlStream(daemon, ["events", "--follow", "--since", String(since)])
        defer { stream.stop() }
        // A job's submitted, started and finished events reach past `since`.
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
        let first = try #require(try stream.nextEvent())
        #expect(first.seq == since + 1, "the first event printed is the one after --since: \(first)")
    }

    @Test("events naming a queue or job orchd never knew is an error; a removed queue's and a pruned job's retained events stay readable")
    func filtersNamingNothing() throws {
        let daemon = try TestDaemon()
        for arguments in [["events", "--queue", "nightyl"], ["events", "--follow", "--queue", "nightyl"]] {
            let typo = try daemon.orchctl(arguments)
            #expect(typo.status == 1 && typo.standardError.contains("no queue named 'nightyl'"), "\(arguments): \(typo)")
            // A filter: adding the queue would not help, so it is not suggested.
            #expect(!typo.standardError.contains("queue add"), "\(arguments): \(typo)")
        }
        let unknownJob = try daemon.orchctl(["events", "--job", "4242"])
        #expect(unknownJob.status == 1 && unknownJob.standardError.contains("no job with ID 4242"), "\(unknownJob)")

        #expect(try daemon.orchctl(["queue", "add", "nightly"]).status == 0)
        let id = try daemon.orchctl(["submit", "--queue", "nightly", "--wait", "--", "true"]).line
        #expect(try daemon.orchctl(["queue", "remove", "nightly"]).status == 0)
        #expect(try daemon.orchctl(["prune", "--all"]).status == 0)
        let byQueue = try daemon.orchctl(["events", "--queue", "nightly"])
        #expect(byQueue.status == 0 && byQueue.standardOutput.contains("\"finished\""), "\(byQueue)")
        let byJob = try daemon.orchctl(["events", "--job", id])
        let kinds = try byJob.standardOutput.split(separator: "\n").map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)).kind.rawValue }
        #expect(byJob.status == 0 && kinds == ["submitted", "started", "finished"], "\(byJob)")
    }

    @Test("a removed queue is forgotten once its last finished job is pruned: cancel and status then name it unknown, as after a restart")
    func removedQueueForgottenAfterPrune() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "rq"]).status == 0)
        #expect(try daemon.orchctl(["submit", "--queue", "rq", "--wait", "--", "true"]).status == 0)
        #expect(try daemon.orchctl(["queue", "remove", "rq"]).status == 0)
        let known = try daemon.orchctl(["status", "--queue", "rq"])
        #expect(known.status == 0, "known while it holds a finished job: \(known)")
        #expect(try daemon.orchctl(["prune", "--all"]).status == 0)
        for arguments in [["cancel", "--queue", "rq"], ["status", "--queue", "rq"]] {
            let refused = try daemon.orchctl(arguments)
            #expect(refused.status == 1 && refused.standardError.contains("no queue named 'rq'"), "\(arguments): \(refused)")
        }
        let history = try daemon.orchctl(["events", "--queue", "rq"])
        #expect(history.status == 0 && history.standardOutput.contains("queue_drained"), "its retained events stay readable: \(history)")
    }

    @Test("events --follow ends quietly at SIGINT (Ctrl-C), with exit status 0")
    func followEndsAtInterrupt() throws {
        let daemon = try TestDaemon()
        _ = try daemon.orchctl(["submit", "--wait", "--", "true"])
        let stream = try OrchctlStream(daemon, ["events", "--follow"], captureErrors: true)
        defer { stream.stop() }
        // Following: the backlog's last event has come.
        while let line = stream.nextLine(), !line.contains("\"kind\":\"finished\"") {}
        kill(stream.process.processIdentifier, SIGINT)
        #expect(stream.rest() != nil, "orchctl ended its output")
        #expect(stream.exitStatus() == 0)
        #expect(stream.nextErrorLine(timeout: 1) == nil, "nothing on standard error")
    }

    @Test("wait --queue Q --drained returns once the queue's last job finishes, not before")
    func waitDrained() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        #expect(try daemon.orchctl(["queue", "add", "q"]).status == 0)
        let blocker = try daemon.orchctl(["submit", "--queue", "q", "--", "sh", "-c", "echo go > '\(marker.path)'; cat '\(gate)'"]).line
        #expect(marker.read() != nil)

        let waiter = Process()
        waiter.executableURL = URL(fileURLWithPath: Binaries.orchctl)
        waiter.arguments = ["--socket", daemon.socketPath, "wait", "--queue", "q", "--drained"]
        try waiter.run()
        // The queue still has a running job: the waiter must still be waiting after a round trip.
        #expect(try daemon.orchctl(["ping"]).status == 0)
        #expect(waiter.isRunning, "not drained while a job runs")
        try release(gate: gate)
        #expect(waiter.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "wait --drained did not return")
        #expect(waiter.terminationStatus == 0)
        #expect(try daemon.orchctl(["show", blocker, "--json"]).standardOutput.contains("succeeded"))
        // An empty queue is drained at once.
        #expect(try daemon.orchctl(["wait", "--queue", "q", "--drained"]).status == 0)
    }

    @Test("a failure hook runs with the job's fields in its environment")
    func failureHook() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/hook")
        let set = try daemon.orchctl([
            "queue", "add", "nightly", "--on", "failed=echo \"$ORCHD_JOB_ID $ORCHD_EVENT $ORCHD_RESULT $ORCHD_EXIT_CODE\" > '\(marker.path)'",
        ])
        #expect(set.status == 0, "\(set)")
        _ = try daemon.orchctl(["submit", "--queue", "nightly", "--wait", "--", "true"])
        let id = try daemon.orchctl(["submit", "--queue", "nightly", "--", "sh", "-c", "exit 5"]).line
        #expect(marker.read() == "\(id) failed failed 5", "only the failure ran the hook")
    }

    @Test("a failed hook fires for a timeout with its result and no exit code; a cancel fires only cancelled")
    func failedHookResults() throws {
        let daemon = try TestDaemon()
        let failed = try ReadyMarker(path: daemon.directory + "/failed")
        let cancelled = try ReadyMarker(path: daemon.directory + "/cancelled")
        let set = try daemon.orchctl([
            "queue", "add", "q",
            "--on", "failed=echo \"$ORCHD_JOB_ID $ORCHD_EVENT $ORCHD_RESULT ${ORCHD_EXIT_CODE-unset}\" > '\(failed.path)'",
            "--on", "cancelled=echo \"$ORCHD_JOB_ID $ORCHD_EVENT $ORCHD_RESULT\" > '\(cancelled.path)'",
        ])
        #expect(set.status == 0, "\(set)")
        // A cancel first: had it fired `failed`, the next read of that marker would show it.
        let paused = try daemon.orchctl(["pause", "q"])
        #expect(paused.status == 0)
        let queued = try daemon.orchctl(["submit", "--queue", "q", "--", "true"]).line
        #expect(try daemon.orchctl(["cancel", queued]).status == 0)
        #expect(cancelled.read() == "\(queued) cancelled cancelled")
        #expect(try daemon.orchctl(["resume", "q"]).status == 0)
        let slow = try daemon.orchctl(["submit", "--queue", "q", "--timeout", "200ms", "--", "sleep", "60"]).line
        #expect(failed.read() == "\(slow) failed timed_out unset")
    }
}

extension OrchctlStream {
    /// The next line of `orchctl events`, decoded.
    func nextEvent() throws -> Event? {
        guard let line = nextLine() else { return nil }
        return try JSONDecoder().decode(Event.self, from: Data(line.utf8))
    }
}
