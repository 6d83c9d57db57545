import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// Streams far longer than a connection's outbox (64 MiB), read through the real orchctl by
/// readers of any speed: each must arrive whole, and orchd's memory must not grow with them.
@Suite("Streaming end to end")
struct StreamingTests {
    @Test("logs prints a 97 MB log whole and byte-exact, and --tail of most of it the exact lines")
    func hugeLog() throws {
        let daemon = try TestDaemon()
        // 12 million numbered lines: 96,888,897 bytes.
        let id = try daemon.orchctl(["submit", "--wait", "--", "seq", "12000000"]).line
        let file = try Data(contentsOf: URL(fileURLWithPath: daemon.stateDirectory + "/logs/0/\(id).1.out"))
        #expect(file.count == 96_888_897)

        let whole = try daemon.orchctl(["logs", id])
        #expect(whole.status == 0, "\(whole.standardError)")
        #expect(whole.outputBytes.count == file.count)
        #expect(Data(whole.outputBytes) == file, "byte-exact")

        let tail = try daemon.orchctl(["logs", "--tail", "8000000", id])
        #expect(tail.status == 0, "\(tail.standardError)")
        let start = try #require(file.range(of: Data("\n4000000\n".utf8))).lowerBound + 9
        #expect(Data(tail.outputBytes) == file[start...], "lines 4000001 to 12000000")
    }

    @Test("a slow reader of a 512 MiB log gets all of it while orchd's memory stays bounded")
    func slowReaderBoundedMemory() throws {
        let daemon = try TestDaemon()
        // A sparse 512 MiB log: made at once, read from the page cache at full speed.
        let id = try daemon.orchctl(["submit", "--wait", "--shell", "truncate -s 512M /proc/self/fd/1"]).line
        let pid = try #require(daemon.process?.processIdentifier)
        let before = try Self.residentBytes(of: pid)

        let reader = try PacedReader(daemon, ["logs", id])
        var total = 0
        var peak = before
        var nextSample = 0
        // 16 KiB pieces: slower than orchd can send, so its replies back up behind the reader.
        reader.readAll(inPiecesOf: 16 * 1024) { piece in
            total += piece.count
            if total >= nextSample {
                peak = max(peak, (try? Self.residentBytes(of: pid)) ?? 0)
                nextSample += 16 << 20
            }
        }
        let (status, errors) = reader.finish()
        #expect(status == 0, "\(errors)")
        #expect(total == 512 << 20)
        #expect(peak - before < 100 << 20, "orchd grew by \(peak - before) bytes while streaming")
    }

    @Test("logs --follow of a job writing 200 MB as fast as it can gets every byte")
    func followFastWriter() throws {
        let daemon = try TestDaemon()
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let total = 200_000_006
        let id = try daemon.orchctl([
            "submit", "--shell", "echo start; read x < '\(gate)'; yes orchd-follows | head -c \(total - 6)",
        ]).line
        let reader = try PacedReader(daemon, ["logs", "--follow", id])
        var output: [UInt8] = []
        // The follower is streaming once "start" arrives; only then does the job write the rest.
        while output.count < 6 {
            let piece = reader.read(upTo: 6 - output.count)
            try #require(!piece.isEmpty, "the follow ended before the job's first line")
            output += piece
        }
        #expect(output == Array("start\n".utf8))
        try release(gate: gate)
        // Each piece is compared with the log file where it came from (already written there).
        let file = open(daemon.stateDirectory + "/logs/0/\(id).1.out", O_RDONLY)
        try #require(file >= 0)
        defer { close(file) }
        var received = output.count
        var mismatches = 0
        var expected = [UInt8](repeating: 0, count: 64 * 1024)
        reader.readAll(inPiecesOf: 64 * 1024) { piece in
            let count = expected.withUnsafeMutableBytes { pread(file, $0.baseAddress, piece.count, off_t(received)) }
            if count != piece.count || memcmp(expected, piece, piece.count) != 0 { mismatches += 1 }
            received += piece.count
        }
        let (status, errors) = reader.finish()
        #expect(status == 0, "\(errors)")
        #expect(received == total)
        #expect(mismatches == 0, "byte-exact")
    }

    @Test("a slow reader of a backlog of 10,000 events gets every one, in order")
    func bigEventBacklog() throws {
        let daemon = try TestDaemon()
        let failed = try daemon.orchctl(["submit", "--wait", "--", "false"]).line
        // Each job is recorded as failed at once (its dependency failed): one event each.
        let batch = String(repeating: "true\n", count: 10_000)
        let submitted = try daemon.orchctl(["submit", "--after", failed, "--batch", "-"], input: batch)
        #expect(submitted.status == 0, "\(submitted.standardError)")

        let reader = try PacedReader(daemon, ["events", "--since", "0"])
        var text: [UInt8] = []
        reader.readAll(inPiecesOf: 1024) { text += $0 }
        let (status, errors) = reader.finish()
        #expect(status == 0, "\(errors)")
        let seqs = try String(decoding: text, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(Event.self, from: Data($0.utf8)).seq
        }
        #expect(seqs.count >= 10_000)
        #expect(seqs == Array(1...Int64(seqs.count)), "every event once, in order")
    }

    /// A follower that has read the backlog and is live, paused while 20,000 jobs are
    /// recorded at once: their events (about 5 MB) are more than its connection holds
    /// (4 MiB), so it falls behind.
    private func pausedFollower(_ daemon: TestDaemon) throws -> (reader: PacedReader, lastSeq: Int64, read: [UInt8]) {
        let failed = try daemon.orchctl(["submit", "--wait", "--", "false"]).line
        let reader = try PacedReader(daemon, ["events", "--follow"])
        // The backlog's last event, the failed job's end: from here the follower is live.
        var text: [UInt8] = []
        while !String(decoding: text, as: UTF8.self).contains("\"kind\":\"finished\"") || text.last != UInt8(ascii: "\n") {
            let piece = reader.read(upTo: 4096)
            #expect(!piece.isEmpty, "the follower ended early")
            if piece.isEmpty { break }
            text += piece
        }
        // Each job is recorded as failed at once (its dependency failed): one event each.
        let batch = String(repeating: "true\n", count: 20_000)
        let submitted = try daemon.orchctl(["submit", "--after", failed, "--batch", "-"], input: batch)
        #expect(submitted.status == 0, "\(submitted.standardError)")
        let last = try #require(try daemon.orchctl(["events", "--job", String(submitted.standardOutput.split(separator: "\n").last ?? "")])
            .standardOutput.split(separator: "\n").last)
        return (reader, try JSONDecoder().decode(Event.self, from: Data(last.utf8)).seq, text)
    }

    private static func seqs(_ text: [UInt8]) throws -> [Int64] {
        try String(decoding: text, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(Event.self, from: Data($0.utf8)).seq
        }
    }

    @Test("events --follow whose reader pauses while 20,000 jobs are recorded at once prints every event once, in order, and follows on")
    func followerThatFallsBehind() throws {
        let daemon = try TestDaemon()
        let (reader, lastSeq, backlog) = try pausedFollower(daemon)
        var seqs = try Self.seqs(backlog)
        var partial: [UInt8] = []
        while (seqs.last ?? 0) < lastSeq {
            let piece = reader.read(upTo: 65536)
            #expect(!piece.isEmpty, "the follower ended early")
            if piece.isEmpty { break }
            partial += piece
            // Whole lines only; the rest waits for the next piece.
            guard let end = partial.lastIndex(of: UInt8(ascii: "\n")) else { continue }
            seqs += try Self.seqs(Array(partial[...end]))
            partial.removeSubrange(...end)
        }
        let whole = seqs == Array(1...lastSeq)
        #expect(whole, "every event once, in order: \(seqs.count) events, \(seqs.first ?? 0) to \(seqs.last ?? 0), of \(lastSeq)")

        // Still live: the next job's events come.
        let id = try daemon.orchctl(["submit", "--", "true"]).line
        var more: [UInt8] = []
        while !String(decoding: more, as: UTF8.self).contains("\"jobId\":\(id)") {
            let piece = reader.read(upTo: 4096)
            #expect(!piece.isEmpty, "the follower ended early")
            if piece.isEmpty { break }
            more += piece
        }
        // SIGKILL: orchctl inherits the test runner's signal mask, which blocks SIGTERM.
        kill(reader.process.processIdentifier, SIGKILL)
        #expect(reader.finish().standardError.isEmpty)
    }

    @Test("a follower that falls behind past --event-retention ends with an error that names it and where to resume; what it printed is whole")
    func followerBehindRetention() throws {
        let daemon = try TestDaemon(arguments: ["--event-retention", "1000"])
        let (reader, _, backlog) = try pausedFollower(daemon)
        var text = backlog
        reader.readAll(inPiecesOf: 65536) { text += $0 }
        let (status, errors) = reader.finish()
        #expect(status == 1)
        #expect(errors.contains("--event-retention"), "\(errors)")
        let seqs = try Self.seqs(text)
        let whole = seqs == Array(1...Int64(seqs.count))
        #expect(whole, "every event up to the gap once, in order: \(seqs.count) events, \(seqs.first ?? 0) to \(seqs.last ?? 0)")
        #expect(errors.contains("resume with --since \(seqs.count)"), "\(errors)")
    }

    @Test("a backlog read slowly while retention trims the events after what it printed ends with the error, never a silent gap")
    func backlogBehindRetention() throws {
        let daemon = try TestDaemon(arguments: ["--event-retention", "10000"])
        let failed = try daemon.orchctl(["submit", "--wait", "--", "false"]).line
        // About 2.4 MB of events, more than the reader's pipe, its socket and orchd's outbox
        // hold, so the backlog's later pages wait for the reader.
        let first = try daemon.orchctl(["submit", "--after", failed, "--batch", "-"], input: String(repeating: "true\n", count: 9_900))
        #expect(first.status == 0, "\(first.standardError)")
        let reader = try PacedReader(daemon, ["events", "--since", "0"])
        var text = reader.read(upTo: 4096)
        // Meanwhile the log is trimmed far past what the reader has been sent.
        let second = try daemon.orchctl(["submit", "--after", failed, "--batch", "-"], input: String(repeating: "true\n", count: 30_000))
        #expect(second.status == 0, "\(second.standardError)")
        reader.readAll(inPiecesOf: 65536) { text += $0 }
        let (status, errors) = reader.finish()
        #expect(status == 1, "\(errors)")
        let seqs = try Self.seqs(text)
        let whole = seqs == Array(1...Int64(seqs.count))
        #expect(whole, "every event up to the gap once, in order: \(seqs.count) events, \(seqs.first ?? 0) to \(seqs.last ?? 0)")
        #expect(errors.contains("--event-retention") && errors.contains("resume with --since \(seqs.count)"), "\(errors)")
    }

    @Test("wait on 5,000 IDs in one call prints every job")
    func waitOnThousands() throws {
        let daemon = try TestDaemon()
        let failed = try daemon.orchctl(["submit", "--wait", "--", "false"]).line
        let submitted = try daemon.orchctl(["submit", "--after", failed, "--batch", "-"], input: String(repeating: "true\n", count: 5_000))
        let ids = submitted.standardOutput.split(separator: "\n").map(String.init)
        #expect(ids.count == 5_000)
        let waited = try daemon.orchctl(["wait"] + ids)
        #expect(waited.status == 1, "dependencies failed: \(waited.standardError)")
        let lines = waited.standardOutput.split(separator: "\n")
        #expect(lines.count == 5_000)
        #expect(lines.map { String($0.split(separator: " ")[0]) } == ids)
    }

    @Test("status --all --json lists 70 MB of jobs with long command lines whole")
    func bigListing() throws {
        let daemon = try TestDaemon()
        let (ids, command) = try Self.submitLongJobs(daemon)
        let listed = try daemon.orchctl(["status", "--all", "--json"])
        #expect(listed.status == 0, "\(listed.standardError)")
        let jobs = try JSONDecoder().decode([Job].self, from: Data(listed.outputBytes))
        #expect(jobs.dropFirst().map(\.id) == ids, "every job once, in ID order")
        #expect(jobs.dropFirst().allSatisfy { $0.spec.command == .shell(command) })
    }

    @Test("wait on jobs whose replies add up to 70 MB prints every one")
    func bigWait() throws {
        let daemon = try TestDaemon()
        let (ids, _) = try Self.submitLongJobs(daemon)
        let waited = try daemon.orchctl(["wait"] + ids.map(\.description))
        #expect(waited.status == 1, "dependencies failed: \(waited.standardError)")
        #expect(waited.standardOutput.split(separator: "\n").map { String($0.split(separator: " ")[0]) } == ids.map(\.description))
    }

    /// Submits 700 jobs whose command lines encode to 102 KB each in JSON (control characters
    /// are escaped as \u0001): 70 MB in all, more than a connection's outbox may hold. They
    /// finish at once: their dependency, the first job, failed. Submitted over Varlink, 9 to a
    /// call (under the 1 MiB call cap): parsing a 70 MB batch file is not what these tests
    /// are about.
    /// - Returns: their IDs, in order, and their command line.
    static func submitLongJobs(_ daemon: TestDaemon) throws -> (ids: [JobID], command: String) {
        let failed = try #require(JobID(parsing: try daemon.orchctl(["submit", "--wait", "--", "false"]).line))
        let command = ": " + String(repeating: "\u{01}", count: 17_000)
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        var ids: [JobID] = []
        while ids.count < 700 {
            let specs = Array(repeating: JobSpec(command: .shell(command), cwd: "/", environment: [:], after: [failed]), count: min(9, 700 - ids.count))
            ids += try client.call(JobsInterface.submitBatch, JobsInterface.SubmitBatchParameters(specs: specs)).ids
        }
        return (ids, command)
    }

    /// The resident memory of process `pid`, from /proc/PID/status (VmRSS).
    static func residentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { throw TestFailure("no VmRSS in /proc/\(pid)/status") }
        return kilobytes * 1024
    }
}
