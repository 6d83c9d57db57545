import Foundation
import Glibc
import Orchestrator
import OrchestratorAPI
import Testing

/// orchd and orchctl end to end: real binaries, real processes, one daemon per test.
@Suite("Jobs end to end")
struct JobLifecycleTests {
    @Test("a job's exit code, stdout and stderr come back through wait, logs and status")
    func exitCodeAndOutput() throws {
        let daemon = try TestDaemon()
        let submitted = try daemon.orchctl(["submit", "--", "sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(submitted.status == 0, "\(submitted)")
        let id = submitted.line
        #expect(Int(id) != nil, "submit prints a bare integer, got '\(id)'")

        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 3, "\(waited)")
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "out\n")
        #expect(try daemon.orchctl(["logs", id, "--stderr"]).standardOutput == "err\n")

        let status = try daemon.orchctl(["status", "--json"])
        #expect(status.status == 0, "\(status)")
        let jobs = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [[String: Any]]
        let job = try #require(jobs?.first { ($0["id"] as? Int).map(String.init) == id })
        #expect(job["state"] as? String == "finished")
        #expect(job["result"] as? String == "failed")
        #expect(job["exitCode"] as? Int == 3)
    }

    @Test("arguments reach the job exactly as given, without a shell")
    func argumentsRoundTrip() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--", "printf", "%s|", "a b", "", "*", "$HOME"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "a b||*|$HOME|")
    }

    @Test("a job's standard input is a /dev/null of its own: it reads end of file, and a lock the job takes on it ends with the job")
    func standardInputOfItsOwn() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--shell", "head -c 1; flock -x 0 && echo locked"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "locked\n")
        // flock(2) locks an open file: one orchd kept open for every job's stdin kept the lock
        // after the job, for every process on the machine that locks /dev/null.
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(null) }
        #expect(flock(null, LOCK_EX | LOCK_NB) == 0, "errno \(errno): the job's lock outlived it")
    }

    @Test("--shell runs the string with /bin/sh -c in the submitter's directory and environment")
    func shellCwdAndEnvironment() throws {
        let daemon = try TestDaemon()
        let workingDirectory = daemon.directory + "/work dir"
        try FileManager.default.createDirectory(atPath: workingDirectory, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["ORCHD_TEST_VALUE"] = "from the submitter"
        environment["NOTIFY_SOCKET"] = "/should/not/leak"
        let submitted = try TestDaemon.run(
            Binaries.orchctl,
            ["--socket", daemon.socketPath, "submit", "--wait", "--shell", #"pwd; echo "$ORCHD_TEST_VALUE"; echo "${NOTIFY_SOCKET:-unset}""#],
            workingDirectory: workingDirectory, environment: environment)
        #expect(submitted.status == 0, "\(submitted)")
        let id = try daemon.orchctl(["status", "--json"]).standardOutput
        let jobs = try JSONSerialization.jsonObject(with: Data(id.utf8)) as? [[String: Any]]
        let jobID = try #require(jobs?.first?["id"] as? Int)
        #expect(try daemon.orchctl(["logs", String(jobID)]).standardOutput == "\(workingDirectory)\nfrom the submitter\nunset\n")
    }

    @Test("with --concurrency 2, six jobs never overlap more than two at a time")
    func concurrencyLimit() throws {
        let daemon = try TestDaemon(concurrency: 2)
        let records = daemon.directory + "/records"
        var ids: [String] = []
        for _ in 0..<6 {
            // Each record line is one small O_APPEND write, so lines never interleave.
            let script = "echo start >> '\(records)'; sleep 0.3; echo end >> '\(records)'"
            ids.append(try daemon.orchctl(["submit", "--shell", script]).line)
        }
        let waited = try daemon.orchctl(["wait"] + ids)
        #expect(waited.status == 0, "\(waited)")
        let lines = try String(contentsOfFile: records, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 12)
        var running = 0
        var most = 0
        for line in lines {
            running += line == "start" ? 1 : -1
            most = max(most, running)
        }
        #expect(most <= 2, "at most two jobs at once, saw \(most)")
        #expect(most == 2, "the two slots were used")
    }

    @Test("cancel tears down a running job's whole process group")
    func cancelRunningJob() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "sleep 300 & echo $$ > '\(marker.path)'; sleep 300"]).line
        let group = try #require(marker.read().flatMap { Int32($0) }, "the job started")

        let cancelled = try daemon.orchctl(["cancel", id])
        #expect(cancelled.status == 0, "\(cancelled)")
        #expect(ProcessGroup(id: group).isGone, "no process of the job's group is left")

        let shown = try daemon.orchctl(["show", id, "--json"])
        let job = try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any]
        #expect(job?["result"] as? String == "cancelled")
        #expect(try daemon.orchctl(["wait", id]).status == 1)
    }

    @Test("cancel of a queued job dequeues it without starting it")
    func cancelQueuedJob() throws {
        let daemon = try TestDaemon(concurrency: 1)
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let blocker = try daemon.orchctl(["submit", "--", "sh", "-c", "echo $$ > '\(marker.path)'; sleep 300"]).line
        #expect(marker.read() != nil)
        let queued = try daemon.orchctl(["submit", "--", "touch", daemon.directory + "/ran"]).line
        #expect(try daemon.orchctl(["cancel", queued]).status == 0)
        #expect(try daemon.orchctl(["cancel", blocker]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.directory + "/ran"))
        let status = try daemon.orchctl(["status", queued, "--json"])
        #expect(status.standardOutput.contains(#""result":"cancelled""#) || status.standardOutput.contains(#""result" : "cancelled""#), "\(status)")
    }

    @Test("a command that cannot be started finishes as spawn_failed with the reason")
    func spawnFailure() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--", "no-such-command-orchd-test"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 127)
        let shown = try daemon.orchctl(["show", id, "--json"])
        let job = try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any]
        #expect(job?["result"] as? String == "spawn_failed")
        #expect((job?["reason"] as? String)?.contains("no-such-command-orchd-test") == true)
    }

    @Test("submit --wait exits with the job's exit code, 128+N when signaled")
    func submitWait() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "exit 7"]).status == 7)
        #expect(try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "kill -TERM $$"]).status == 128 + SIGTERM)
    }

    @Test("a --timeout shorter than a call, even 0, still gives what orchd knows at once: a finished job's result, an unknown ID's error, an empty queue; only a job still running times out (124), and is the one named")
    func waitTimeoutZero() throws {
        let daemon = try TestDaemon()
        let finished = try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "exit 5"]).line
        let waited = try daemon.orchctl(["wait", "--timeout", "0", finished])
        #expect(waited.status == 5 && waited.standardOutput == "\(finished) failed(5)\n", "\(waited)")
        let repeated = try daemon.orchctl(["wait", finished, finished])
        #expect(repeated.standardOutput == "\(finished) failed(5)\n", "an ID given twice is reported once: \(repeated)")
        let unknown = try daemon.orchctl(["wait", "--timeout", "0", "999999"])
        #expect(unknown.status == 1 && unknown.standardError == "Error: no job with ID 999999\n", "\(unknown)")
        #expect(try daemon.orchctl(["wait", "--timeout", "0", "--queue", "default", "--drained"]).status == 0)
        // The drained queue as `queues --json` gives it, every field.
        let drained = try daemon.orchctl(["wait", "--json", "--queue", "default", "--drained"])
        let listed = try daemon.orchctl(["queues", "--json"])
        let drainedQueue = try #require(try JSONSerialization.jsonObject(with: Data(drained.standardOutput.utf8)) as? [String: Any], "\(drained)")
        let listedQueue = try #require((try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]])?.first, "\(listed)")
        #expect(Set(drainedQueue.keys) == Set(listedQueue.keys), "\(drained.standardOutput)\n\(listed.standardOutput)")

        let running = try daemon.orchctl(["submit", "--", "sleep", "60"]).line
        let timedOut = try daemon.orchctl(["wait", "--timeout", "0", finished, running])
        // The error names the jobs that have not finished, each once, not the finished one.
        #expect(timedOut.status == 124 && timedOut.standardError == "Error: timed out after 0ms waiting for job \(running)\n", "\(timedOut)")
        let twice = try daemon.orchctl(["wait", "--json", "--timeout", "100ms", running, finished, running])
        #expect(twice.status == 124 && twice.standardError == "Error: timed out after 100ms waiting for job \(running)\n", "\(twice)")
        #expect(try daemon.orchctl(["wait", "--timeout", "0", "--queue", "default", "--drained"]).status == 124)
        #expect(try daemon.orchctl(["cancel", running]).status == 0)
    }
}
