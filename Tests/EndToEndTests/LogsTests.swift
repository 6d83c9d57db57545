import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// `orchctl logs` with --follow and --tail, and `io.orchd.Jobs.Logs` offsets, end to end.
@Suite("Logs end to end")
struct LogsTests {
    @Test("logs --follow prints a running job's output as it is written and exits 0 when the job ends")
    func follow() throws {
        let daemon = try TestDaemon()
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "echo first; read x < '\(gate)'; echo second"]).line
        let stream = try OrchctlStream(daemon, ["logs", "--follow", id])
        defer { stream.stop() }
        #expect(stream.nextLine() == "first")
        // The job is blocked on the gate: opening it for writing waits for the job to open it.
        try release(gate: gate)
        #expect(stream.nextLine() == "second")
        #expect(stream.rest() == "", "nothing more, and the output ends")
        #expect(stream.exitStatus() == 0)
    }

    @Test("logs --both --follow of a finished job prints its standard output first, as logs --both does")
    func followBothOfAFinishedJob() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "echo out1; echo err1 >&2; echo out2; echo err2 >&2"]).line
        #expect(try daemon.orchctl(["logs", "--both", id]).standardOutput == "out1\nout2\nerr1\nerr2\n")
        // Both streams are followed on connections of their own; the standard error's used to
        // come first.
        for _ in 1...3 {
            #expect(try daemon.orchctl(["logs", "--both", "--follow", id]).standardOutput == "out1\nout2\nerr1\nerr2\n")
        }
        // More standard output than one reply carries: all of it still comes first.
        let large = try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "seq 1 100000; echo err >&2"]).line
        let whole = try daemon.orchctl(["logs", "--both", large]).standardOutput
        #expect(whole.hasSuffix("\n100000\nerr\n"))
        for _ in 1...3 {
            #expect(try daemon.orchctl(["logs", "--both", "--follow", large]).standardOutput == whole)
        }
    }

    @Test("following a job still queued waits for its log file to appear, then follows it to the end")
    func followQueued() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "later", "--concurrency", "1"]).status == 0)
        #expect(try daemon.orchctl(["pause", "later"]).status == 0)
        let id = try daemon.orchctl(["submit", "--queue", "later", "--", "sh", "-c", "echo a; echo b >&2; echo c"]).line
        let jobID = try #require(JobID(parsing: id))
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        var output = Data()
        var replies = 0
        try client.stream(
            JobsInterface.logs, JobsInterface.LogsParameters(id: jobID, stream: .stdout, follow: true)
        ) { reply in
            replies += 1
            output.append(try #require(Data(base64Encoded: reply.data)))
            // The first reply says the follower is watching for the file: start the job now.
            if replies == 1 {
                #expect(reply.data == "")
                #expect(try daemon.orchctl(["resume", "later"]).status == 0)
            }
            return true
        }
        #expect(String(decoding: output, as: UTF8.self) == "a\nc\n")
        // A finished job's follow ends at once.
        let again = try daemon.orchctl(["logs", "--follow", "--stderr", id])
        #expect(again.status == 0 && again.standardOutput == "b\n")
    }

    @Test("logs --tail 2 of a 5-line log prints the last 2 lines; --tail 0 prints nothing")
    func tail() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "for i in 1 2 3 4 5; do echo line $i; done"]).line
        #expect(try daemon.orchctl(["logs", "--tail", "2", id]).standardOutput == "line 4\nline 5\n")
        #expect(try daemon.orchctl(["logs", id, "--tail", "9"]).standardOutput == (1...5).map { "line \($0)\n" }.joined())
        #expect(try daemon.orchctl(["logs", id, "--tail", "0"]).standardOutput == "")
        #expect(try daemon.orchctl(["logs", "-f", "--tail", "1", id]).standardOutput == "line 5\n")
        let bad = try daemon.orchctl(["logs", id, "--tail", "-2"])
        #expect(bad.status == 64)
    }

    @Test("an offset past the end of the log is its end over Varlink, not an error")
    func hugeOffset() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--wait", "--", "echo", "hello"]).line
        let jobID = try #require(JobID(parsing: id))
        for offset in [Int64.max, Int64.max - 1, 1 << 40, 7] {
            let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
            var replies: [JobsInterface.LogsReply] = []
            try client.stream(
                JobsInterface.logs, JobsInterface.LogsParameters(id: jobID, stream: .stdout, offset: offset)
            ) { reply in
                replies.append(reply)
                return true
            }
            #expect(replies.count == 1, "offset \(offset)")
            #expect(replies.first?.data == "" && replies.first?.offset == 6, "offset \(offset)")
        }
    }

    @Test("a log written before logs had a directory per owner (<log dir>/<id>.out) is still read, and pruned with its job")
    func legacyLogPath() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "echo old layout"]).line
        let logs = daemon.stateDirectory + "/logs"
        for suffix in ["out", "err"] {
            #expect(rename("\(logs)/0/\(id).1.\(suffix)", "\(logs)/\(id).\(suffix)") == 0)
        }
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "old layout\n")
        #expect(try daemon.orchctl(["logs", "--follow", id]).standardOutput == "old layout\n")
        #expect(try daemon.orchctl(["prune", "--all"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: "\(logs)/\(id).out"))
    }

    @Test("a started job whose log file was deleted is an error naming the file, for stdout, --stderr and --follow")
    func missingLog() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--wait", "--", "sh", "-c", "echo out; echo err >&2"]).line
        let out = daemon.stateDirectory + "/logs/0/\(id).1.out"
        let err = daemon.stateDirectory + "/logs/0/\(id).1.err"
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "out\n")
        try FileManager.default.removeItem(atPath: out)
        for arguments in [["logs", id], ["logs", "--follow", id], ["logs", "--tail", "3", id]] {
            let result = try daemon.orchctl(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.standardError == "Error: the log file \(out) is missing: the job started, so it was deleted or moved since, and its output is lost\n", "\(arguments)")
            #expect(result.standardOutput == "")
        }
        // The other stream is still there and still readable.
        #expect(try daemon.orchctl(["logs", "--stderr", id]).standardOutput == "err\n")
        try FileManager.default.removeItem(atPath: err)
        for arguments in [["logs", "--stderr", id], ["logs", "--stderr", "--follow", id]] {
            let result = try daemon.orchctl(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.standardError.hasPrefix("Error: the log file \(err) is missing"), "\(arguments)")
        }
        // Over Varlink the error is LogMissing with the path.
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        #expect {
            try client.stream(
                JobsInterface.logs, JobsInterface.LogsParameters(id: try #require(JobID(parsing: id)), stream: .stdout)) { _ in true }
        } throws: { error in
            guard case .remote(let remote) = error as? VarlinkClientError else { return false }
            return remote.name == "io.orchd.Jobs.LogMissing" && remote.parameters["path"] == .string(out)
        }
    }

    @Test("a job that never started has empty output, not an error, and a line on stderr says why: queued, dependency_failed, spawn_failed")
    func neverStarted() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "held", "--concurrency", "1"]).status == 0)
        #expect(try daemon.orchctl(["pause", "held"]).status == 0)
        let queued = try daemon.orchctl(["submit", "--queue", "held", "--", "echo", "x"]).line
        let spawnFailed = try daemon.orchctl(["submit", "--wait", "--", "/nonexistent/program"]).line
        let failing = try daemon.orchctl(["submit", "--wait", "--", "false"]).line
        let dependent = try daemon.orchctl(["submit", "--wait", "--after", failing, "--", "echo", "y"]).line
        // Standard error says why, whichever stream was asked for, so the silence is not
        // taken for an empty log.
        let why = [
            queued: "orchctl: job \(queued) has not started, so it has no output yet: it is queued\n",
            dependent: "orchctl: job \(dependent) never ran, so it has no output: it finished dependency_failed without running\n",
        ]
        for id in [queued, spawnFailed, dependent] {
            for arguments in [["logs", id], ["logs", "--stderr", id], ["logs", "--both", id]] {
                let result = try daemon.orchctl(arguments)
                #expect(result.status == 0, "\(arguments): \(result)")
                #expect(result.standardOutput == "", "\(arguments)")
                if let expected = why[id] {
                    #expect(result.standardError == expected, "\(arguments)")
                } else {
                    #expect(result.standardError.contains("never ran, so it has no output: it could not be started"), "\(arguments): \(result)")
                }
            }
        }
        #expect(try daemon.orchctl(["logs", "--follow", dependent]).status == 0)
        // A cancelled queued job never had a log either.
        #expect(try daemon.orchctl(["cancel", queued]).status == 0)
        #expect(try daemon.orchctl(["logs", "--follow", queued]).status == 0)
    }

    @Test("a log directory removed while orchd runs is made again for the next job, which runs and keeps its output")
    func logDirectoryRemoved() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["submit", "--wait", "--", "echo", "before"]).status == 0)
        try FileManager.default.removeItem(atPath: daemon.stateDirectory + "/logs")
        let after = try daemon.orchctl(["submit", "--wait", "--", "echo", "after"])
        #expect(after.status == 0, "\(after)\n\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["logs", after.line]).standardOutput == "after\n")
        let mode = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/logs")[.posixPermissions] as? Int
        #expect(mode == (geteuid() == 0 ? 0o711 : 0o700))
    }
}
