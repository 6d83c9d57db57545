import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// Each attempt's own output (`logs --attempt N`), `logs --both`, the hint at a non-empty
/// standard error, and logs written by an orchd from before per-attempt files, end to end.
@Suite("Attempt logs end to end")
struct AttemptLogsTests {
    /// A job whose first attempt prints "first" and "oops" (stderr) and fails, and whose
    /// second prints "second" and succeeds; `gate`, when given, holds the first attempt
    /// until it is opened for writing.
    private func retriedJob(_ daemon: TestDaemon, gate: String? = nil) throws -> String {
        #expect(try daemon.orchctl(["queue", "set", "default", "--retry-base", "10ms", "--retry-cap", "10ms"]).status == 0)
        let marker = daemon.directory + "/marker-\(UUID().uuidString)"
        let hold = gate.map { "read x < '\($0)'; " } ?? ""
        let script = "if [ -e '\(marker)' ]; then echo second; else touch '\(marker)'; echo first; echo oops >&2; \(hold)exit 3; fi"
        return try daemon.orchctl(["submit", "--retries", "1", "--shell", script]).line
    }

    @Test("a retry keeps the earlier attempt's output: logs shows the latest, --attempt N any attempt")
    func attempts() throws {
        let daemon = try TestDaemon()
        let id = try retriedJob(daemon)
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "second\n")
        #expect(try daemon.orchctl(["logs", "--attempt", "2", id]).standardOutput == "second\n")
        #expect(try daemon.orchctl(["logs", "--attempt", "1", id]).standardOutput == "first\n")
        #expect(try daemon.orchctl(["logs", "--attempt", "1", "--stderr", id]).standardOutput == "oops\n")
        #expect(try daemon.orchctl(["logs", "--attempt", "1", "--both", id]).standardOutput == "first\noops\n",
                "piped: plain, stdout then stderr")
        let beyond = try daemon.orchctl(["logs", "--attempt", "3", id])
        #expect(beyond.status == 1 && beyond.standardError.contains("job \(id) has no attempt 3: its attempts are 1 to 2"), "\(beyond)")
        let zero = try daemon.orchctl(["logs", "--attempt", "0", id])
        #expect(zero.status == 64 && zero.standardError.contains("'--attempt'"), "\(zero)")
        let both = try daemon.orchctl(["logs", "--both", "--stderr", id])
        #expect(both.status == 64, "\(both)")
        let files = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/logs/0").filter { $0.hasPrefix("\(id).") }
        #expect(files.sorted() == ["\(id).1.err", "\(id).1.out", "\(id).2.err", "\(id).2.out"])
        // Pruning deletes every attempt's files.
        #expect(try daemon.orchctl(["prune", "--all"]).status == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/logs/0").filter { $0.hasPrefix("\(id).") }
        #expect(left.isEmpty)
    }

    @Test("logs --follow goes on from a failed attempt to the retry's output")
    func followAcrossRetry() throws {
        let daemon = try TestDaemon()
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try retriedJob(daemon, gate: gate)
        let stream = try OrchctlStream(daemon, ["logs", "--follow", id])
        defer { stream.stop() }
        #expect(stream.nextLine() == "first")
        try release(gate: gate)
        #expect(stream.nextLine() == "second")
        #expect(stream.rest() == "")
        #expect(stream.exitStatus() == 0)
    }

    @Test("logs -f --both follows both streams of a running job until it ends")
    func followBoth() throws {
        let daemon = try TestDaemon()
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl(["submit", "--shell", "echo out1; echo err1 >&2; read x < '\(gate)'; echo out2; echo err2 >&2"]).line
        let stream = try OrchctlStream(daemon, ["logs", "-f", "--both", id])
        defer { stream.stop() }
        let first = [stream.nextLine(), stream.nextLine()].compactMap { $0 }.sorted()
        #expect(first == ["err1", "out1"])
        try release(gate: gate)
        let rest = (stream.rest() ?? "").split(separator: "\n").map(String.init).sorted()
        #expect(rest == ["err2", "out2"])
        #expect(stream.exitStatus() == 0)
    }

    @Test("an empty stdout with a non-empty stderr prints a one-line hint on stderr")
    func hint() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--shell", "echo 'no such file' >&2; exit 2"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 2)
        let logs = try daemon.orchctl(["logs", id])
        #expect(logs.status == 0 && logs.standardOutput == "")
        #expect(logs.standardError == "orchctl: job \(id) wrote nothing to standard output but 13 bytes to standard error; see 'orchctl logs --stderr \(id)'\n")
        // Nothing to hint at: a silent job, or output on stdout.
        let silent = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        #expect(try daemon.orchctl(["logs", silent]).standardError == "")
    }

    @Test("the logs of a job run before per-attempt files (<id>.out) stay readable")
    func legacyLogs() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--wait", "--shell", "echo old; echo olderr >&2"]).line
        #expect(daemon.stop() == 0)
        // What an older orchd left: one pair of files per job.
        let logs = daemon.stateDirectory + "/logs/"
        try #require(rename(logs + "0/\(id).1.out", logs + "\(id).out") == 0)
        try #require(rename(logs + "0/\(id).1.err", logs + "\(id).err") == 0)
        try daemon.start()
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "old\n")
        #expect(try daemon.orchctl(["logs", "--attempt", "1", "--stderr", id]).standardOutput == "olderr\n")
        // A retry gets files of its own; the old output stays attempt 1's.
        #expect(try daemon.orchctl(["retry", id]).status == 0)
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try daemon.orchctl(["logs", "--attempt", "1", id]).standardOutput == "old\n")
        #expect(try daemon.orchctl(["logs", "--attempt", "2", id]).standardOutput == "old\n")
        #expect(FileManager.default.fileExists(atPath: logs + "0/\(id).2.out"))
        #expect(try daemon.orchctl(["prune", "--all"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: logs + "\(id).out"))
    }
}
