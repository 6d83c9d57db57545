import Foundation
import Glibc
import OrchestratorAPI
import Testing

/// The event log through `orchctl events`, queue drain waits and queue hooks, end to end.
@Suite("Events end to end")
struct EventTests {
    /// Starts `orchctl events ARGS` and reads its lines as they come.
    final class EventStream {
        let process = Process()
        private let output = Pipe()
        private var buffer = Data()

        init(_ daemon: TestDaemon, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Binaries.orchctl)
            process.arguments = ["--socket", daemon.socketPath, "events"] + arguments
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// The next line, or `nil` when none arrives within `timeout` seconds.
        func nextLine(timeout: Double = 20) -> String? {
            let fd = output.fileHandleForReading.fileDescriptor
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    return line
                }
                var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&pollFD, 1, Int32(timeout * 1000)) == 1 else { return nil }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { return nil }
                buffer.append(contentsOf: chunk[..<count])
            }
        }

        /// The next event decoded, skipping none.
        func nextEvent() throws -> Event? {
            guard let line = nextLine() else { return nil }
            return try JSONDecoder().decode(Event.self, from: Data(line.utf8))
        }

        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    @Test("events --follow started before a submit prints submitted, started, finished in order; --since resumes exactly")
    func followAndResume() throws {
        let daemon = try TestDaemon()
        // A first job, so there is history before the follower starts.
        _ = try daemon.orchctl(["submit", "--wait", "--", "true"])
        let backlog = try daemon.orchctl(["events"])
        let history = try backlog.standardOutput.split(separator: "\n").map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
        let lastSeen = try #require(history.last?.seq)

        let stream = try EventStream(daemon, ["--follow", "--since", String(lastSeen)])
        defer { stream.stop() }
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "exit 4"]).line
        var kinds: [String] = []
        var seqs: [Int64] = []
        while kinds.last != "finished", let event = try stream.nextEvent() {
            if event.jobId?.description == id {
                kinds.append(event.kind)
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

    @Test("wait --queue Q --drained returns once the queue's last job finishes, not before")
    func waitDrained() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let blocker = try daemon.orchctl(["submit", "--queue", "q", "--", "sh", "-c", "echo go > '\(marker.path)'; cat '\(gate)'"]).line
        #expect(marker.read() != nil)

        let waiter = Process()
        waiter.executableURL = URL(fileURLWithPath: Binaries.orchctl)
        waiter.arguments = ["--socket", daemon.socketPath, "wait", "--queue", "q", "--drained"]
        try waiter.run()
        // The queue still has a running job: the waiter must still be waiting after a round trip.
        #expect(try daemon.orchctl(["ping"]).status == 0)
        #expect(waiter.isRunning, "not drained while a job runs")
        close(open(gate, O_WRONLY))
        waiter.waitUntilExit()
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
            "queue", "set", "nightly", "--on", "failed=echo \"$ORCHD_JOB_ID $ORCHD_EVENT $ORCHD_RESULT $ORCHD_EXIT_CODE\" > '\(marker.path)'",
        ])
        #expect(set.status == 0, "\(set)")
        _ = try daemon.orchctl(["submit", "--queue", "nightly", "--wait", "--", "true"])
        let id = try daemon.orchctl(["submit", "--queue", "nightly", "--", "sh", "-c", "exit 5"]).line
        #expect(marker.read() == "\(id) finished failed 5", "only the failure ran the hook")
    }
}
