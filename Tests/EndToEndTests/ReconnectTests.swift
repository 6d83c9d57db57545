import Foundation
import OrchestratorAPI
import Glibc
import Testing
import TestWaitLimits

/// Commands that follow orchd survive a restart of it: they say so once on standard error,
/// reconnect, and resume where they were, printing nothing twice. orchd is killed (SIGKILL,
/// as a crash) and started again while each command runs; every step waits on a marker.
@Suite("Reconnecting after a restart of orchd")
struct ReconnectTests {
    /// The line orchctl prints once when it lost orchd and tries again.
    static let reconnecting = "reconnecting for up to"

    @Test("submit --wait prints the ID once and still exits with the job's status after orchd restarts")
    func submitWait() throws {
        let daemon = try TestDaemon()
        try Self.pauseDefaultQueue(daemon)
        let submit = try OrchctlStream(daemon, ["submit", "--wait", "--", "sh", "-c", "exit 3"], captureErrors: true)
        defer { submit.stop() }
        let id = try #require(submit.nextLine(), "the ID comes first")
        // Then, once, the note on the paused queue: waited for, so that the crash comes
        // after it and the next line is the reconnect message (under load, the note came
        // first once; it had mostly lost the race).
        let note = try #require(submit.nextErrorLine())
        #expect(note.contains("queue default is paused, so job \(id) starts only once it is resumed"), "\(note)")

        daemon.crash()
        let message = try #require(submit.nextErrorLine())
        #expect(message.contains(Self.reconnecting), "\(message)")
        try daemon.start()
        #expect(try daemon.orchctl(["resume", "default"]).status == 0)

        #expect(submit.rest() == "", "nothing after the ID of job \(id)")
        #expect(submit.exitStatus() == 3)
        #expect(submit.nextErrorLine(timeout: 1) == nil, "the message comes once")
    }

    @Test("wait goes on waiting for the same job after orchd restarts")
    func waitAcrossRestart() throws {
        let daemon = try TestDaemon()
        try Self.pauseDefaultQueue(daemon)
        let id = try daemon.orchctl(["submit", "--", "true"]).line
        // `wait` prints nothing until the end, so nothing would tell when it has reached
        // orchd. Instead, while orchd is stopped, the test holds its socket: accepting the
        // connection and reading the call is the marker; closing it is orchd going away.
        daemon.crash()
        unlink(daemon.socketPath)
        let holder = try SocketHolder(path: daemon.socketPath)
        let wait = try OrchctlStream(daemon, ["wait", id], captureErrors: true)
        defer { wait.stop() }
        // First the job's start time (for a note when it is far ahead), then the wait.
        let list = try #require(holder.acceptAndReadCall(), "orchctl sent its first call")
        #expect(list.contains("io.orchd.Jobs.List"), "\(list)")
        holder.reply(#"{"parameters":{"jobs":[{"id":\#(id),"state":"queued","notBefore":null}]}}"#)
        let call = try #require(holder.readCall(), "orchctl sent its wait on the same connection")
        #expect(call.contains("io.orchd.Jobs.Wait"), "\(call)")
        holder.close()

        let message = try #require(wait.nextErrorLine())
        #expect(message.contains(Self.reconnecting), "\(message)")
        try daemon.start()
        #expect(try daemon.orchctl(["resume", "default"]).status == 0)
        #expect(wait.rest() == "\(id) succeeded\n")
        #expect(wait.exitStatus() == 0)
        #expect(wait.nextErrorLine(timeout: 1) == nil, "the message comes once")
    }

    /// A listening socket at orchd's path that accepts one client and reads its first call.
    final class SocketHolder {
        private var listener: Int32
        private var client: Int32 = -1
        private let path: String

        init(path: String) throws {
            self.path = path
            listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let bound = withUnixAddress(path) { [listener] in bind(listener, $0, $1) }
            guard listener >= 0, bound == 0, listen(listener, 8) == 0 else { throw TestFailure("cannot listen on \(path): \(errno)") }
        }

        deinit { close() }

        /// Accepts one client (within 30 s) and reads until its call's closing NUL.
        func acceptAndReadCall() -> String? {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 30_000) == 1 else { return nil }
            client = accept(listener, nil, nil)
            guard client >= 0 else { return nil }
            return readCall()
        }

        /// Sends `message` and its closing NUL to the client.
        func reply(_ message: String) {
            let bytes = Array(message.utf8) + [0]
            _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
        }

        /// Reads the client's next call (within 30 s), until its closing NUL.
        func readCall() -> String? {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !bytes.contains(0) {
                var pending = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                guard poll(&pending, 1, 30_000) == 1 else { return nil }
                let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                guard count > 0 else { return nil }
                bytes += buffer[..<count]
            }
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }

        /// Closes the connection and the listener and removes the socket file, as an orchd
        /// that stopped would.
        func close() {
            if client >= 0 { Glibc.close(client) }
            if listener >= 0 {
                Glibc.close(listener)
                unlink(path)
            }
            client = -1
            listener = -1
        }
    }

    @Test("logs -f resumes at the byte it had reached: output written during the outage comes once; the restart is said once, with --both too",
        arguments: [false, true])
    func logsFollow(both: Bool) throws {
        let daemon = try TestDaemon()
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let written = try ReadyMarker(path: daemon.directory + "/written")
        let id = try daemon.orchctl([
            "submit", "--shell", "echo first; read x < \(gate); echo second; echo done > \(written.path)",
        ]).line
        let logs = try OrchctlStream(daemon, ["logs", "-f", id] + (both ? ["--both"] : []), captureErrors: true)
        defer { logs.stop() }
        #expect(logs.nextLine() == "first")

        // The job outlives the killed orchd and writes on into its log file.
        daemon.crash()
        let message = try #require(logs.nextErrorLine())
        #expect(message.contains(Self.reconnecting), "\(message)")
        let opener = try openForWriting(fifo: gate)
        try #require(opener >= 0)
        _ = write(opener, "go\n", 3)
        close(opener)
        #expect(written.read() == "done")

        try daemon.start()
        #expect(logs.rest() == "second\n")
        #expect(logs.exitStatus() == 0)
        #expect(logs.nextErrorLine(timeout: 1) == nil, "the message comes once: \(daemon.daemonLog)")
    }

    @Test("logs -f resumes in the attempt it was reading: a retry during the outage loses neither the old attempt's end nor the new one's start")
    func logsFollowAcrossRetry() throws {
        let daemon = try TestDaemon()
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let written = try ReadyMarker(path: daemon.directory + "/written")
        let counter = daemon.directory + "/attempts"
        let id = try daemon.orchctl([
            "submit", "--retries", "1", "--shell",
            """
            n=$(cat \(counter) 2>/dev/null || echo 0); n=$((n+1)); echo $n > \(counter)
            if [ $n = 1 ]; then echo one-a; read x < \(gate); echo one-b; exit 3; fi
            echo two-a; echo two-b; echo done > \(written.path)
            """,
        ]).line
        let logs = try OrchctlStream(daemon, ["logs", "-f", id], captureErrors: true)
        defer { logs.stop() }
        #expect(logs.nextLine() == "one-a")

        // orchctl reconnects only once the retry has written: its offset is in attempt 1.
        let client = logs.process.processIdentifier
        kill(client, SIGSTOP)
        daemon.crash()
        let opener = try openForWriting(fifo: gate)
        try #require(opener >= 0)
        _ = write(opener, "go\n", 3)
        close(opener)
        try daemon.start()
        #expect(written.read() == "done")
        // The job has finished, too: the stream must still go on from attempt 1 to attempt 2.
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        kill(client, SIGCONT)

        #expect(logs.rest() == "one-b\ntwo-a\ntwo-b\n")
        #expect(logs.exitStatus() == 0)
    }

    @Test("events --follow goes on after the last event it printed: no event twice, new ones after the restart")
    func eventsFollow() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
        let events = try OrchctlStream(daemon, ["events", "--follow"], captureErrors: true)
        defer { events.stop() }
        var lines = [try #require(events.nextLine())]

        daemon.crash()
        let message = try #require(events.nextErrorLine())
        #expect(message.contains(Self.reconnecting), "\(message)")
        try daemon.start()
        let id = try daemon.orchctl(["submit", "--wait", "--", "true"]).line

        while let line = events.nextLine() {
            lines.append(line)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if object["kind"] as? String == "finished", (object["jobId"] as? Int).map(String.init) == id { break }
        }
        let seqs = try lines.map { line -> Int in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(object["seq"] as? Int)
        }
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "each event once, in order: \(seqs)")
        #expect(lines.last?.contains("\"kind\":\"finished\"") == true, "the job submitted after the restart was followed")
    }

    @Test("events --follow that reconnects after retention dropped events it had not printed ends saying where to resume, instead of skipping them")
    func eventsFollowGap() throws {
        let daemon = try TestDaemon(arguments: ["--event-retention", "1000"])
        try Self.pauseDefaultQueue(daemon)
        let events = try OrchctlStream(daemon, ["events", "--follow"], captureErrors: true)
        defer { events.stop() }
        _ = try #require(events.nextLine())
        // One that has printed nothing yet: its gap starts at its --since.
        let lastLine = try #require(try daemon.orchctl(["events"]).standardOutput.split(separator: "\n").last)
        let last = try JSONDecoder().decode(Event.self, from: Data(lastLine.utf8)).seq
        let orchd = try #require(daemon.process?.processIdentifier)
        let before = Self.sockets(of: orchd)
        let quiet = try OrchctlStream(daemon, ["events", "--follow", "--since", String(last)], captureErrors: true)
        defer { quiet.stop() }
        // It prints nothing, so orchd's accepting its connection is what shows it reached orchd
        // before the crash (on a loaded machine it may start late).
        #expect(Self.waitForNewSocket(of: orchd, besides: before), "orchd accepted the quiet follower")
        daemon.crash()
        let message = try #require(events.nextErrorLine())
        #expect(message.contains(Self.reconnecting), "\(message)")
        let quietMessage = quiet.nextErrorLine()
        #expect(quietMessage?.contains(Self.reconnecting) == true, "\(quietMessage ?? "nothing")")
        // Meanwhile another orchd on the same state directory, on a socket the follower does not
        // try, records 1,500 events: retention drops the first of them.
        let alternate = daemon.directory + "/alternate.sock"
        try daemon.start(extraArguments: ["--socket", alternate])
        let batch = try TestDaemon.run(Binaries.orchctl, ["--socket", alternate, "submit", "--batch", "-"], input: String(repeating: "true\n", count: 1_500))
        #expect(batch.status == 0, "\(batch)")
        #expect(daemon.stop() == 0)
        try daemon.start()
        let ended = try #require(events.nextErrorLine())
        #expect(ended.contains("resume with --since"), "\(ended)")
        #expect(events.exitStatus() == 1)
        let quietEnded = try #require(quiet.nextErrorLine())
        #expect(quietEnded.contains("resume with --since \(last)"), "\(quietEnded)")
        #expect(quiet.exitStatus() == 1)
    }

    /// The sockets process `pid` has open, as `/proc/PID/fd` names them (`socket:[inode]`).
    private static func sockets(of pid: Int32) -> Set<String> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return Set(entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
            .filter { $0.hasPrefix("socket:") })
    }

    /// Waits until process `pid` has a socket open that is not in `earlier`, for up to 20 s.
    /// A new socket, not a larger count: the connection of the `orchctl` call just before may
    /// still be open when `earlier` is read and close meanwhile, which left the count equal.
    private static func waitForNewSocket(of pid: Int32, besides earlier: Set<String>) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if !sockets(of: pid).subtracting(earlier).isEmpty { return true }
            usleep(10_000)
        }
        return false
    }

    @Test("--reconnect-timeout 0 gives up at once, as before, with 69: never 1, which wait exits with for a failed job")
    func noReconnect() throws {
        let daemon = try TestDaemon()
        let events = try OrchctlStream(daemon, ["events", "--follow", "--reconnect-timeout", "0"], captureErrors: true)
        defer { events.stop() }
        // Answered once already (the line above), so the loss comes mid-request.
        #expect(events.nextLine() != nil)
        daemon.crash()
        let message = try #require(events.nextErrorLine())
        #expect(message.hasPrefix("Error: "), "\(message)")
        #expect(events.exitStatus() == 69)
    }

    /// Holds every job of the default queue queued, across restarts (the pause is stored).
    static func pauseDefaultQueue(_ daemon: TestDaemon) throws {
        let set = try daemon.orchctl(["queue", "set", "default", "--concurrency", "1"])
        try #require(set.status == 0, "\(set)")
        let paused = try daemon.orchctl(["pause", "default"])
        try #require(paused.status == 0, "\(paused)")
    }
}
