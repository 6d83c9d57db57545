import Foundation
import Glibc
import Testing

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
        // Nothing tells when `wait` has reached orchd (it prints only at the end); one killed
        // before that exits 69 at once, as orchd was never there for it. Then try again.
        var waiter: OrchctlStream?
        for _ in 0..<5 {
            let candidate = try OrchctlStream(daemon, ["wait", id], captureErrors: true)
            daemon.crash()
            let message = candidate.nextErrorLine() ?? ""
            try daemon.start()
            if message.contains(Self.reconnecting) {
                waiter = candidate
                break
            }
            #expect(message.contains("cannot reach orchd"), "\(message)")
            #expect(candidate.exitStatus() == 69)
        }
        let wait = try #require(waiter, "wait never reached orchd before it was killed")
        defer { wait.stop() }
        #expect(try daemon.orchctl(["resume", "default"]).status == 0)
        #expect(wait.rest() == "\(id) succeeded\n")
        #expect(wait.exitStatus() == 0)
    }

    @Test("logs -f resumes at the byte it had reached: output written during the outage comes once")
    func logsFollow() throws {
        let daemon = try TestDaemon()
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let written = try ReadyMarker(path: daemon.directory + "/written")
        let id = try daemon.orchctl([
            "submit", "--shell", "echo first; read x < \(gate); echo second; echo done > \(written.path)",
        ]).line
        let logs = try OrchctlStream(daemon, ["logs", "-f", id], captureErrors: true)
        defer { logs.stop() }
        #expect(logs.nextLine() == "first")

        // The job outlives the killed orchd and writes on into its log file.
        daemon.crash()
        let message = try #require(logs.nextErrorLine())
        #expect(message.contains(Self.reconnecting), "\(message)")
        let opener = open(gate, O_WRONLY | O_CLOEXEC)
        try #require(opener >= 0)
        _ = write(opener, "go\n", 3)
        close(opener)
        #expect(written.read() == "done")

        try daemon.start()
        #expect(logs.rest() == "second\n")
        #expect(logs.exitStatus() == 0)
        #expect(logs.nextErrorLine(timeout: 1) == nil, "the message comes once: \(daemon.daemonLog)")
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

    @Test("--reconnect-timeout 0 gives up at once, as before")
    func noReconnect() throws {
        let daemon = try TestDaemon()
        let events = try OrchctlStream(daemon, ["events", "--follow", "--reconnect-timeout", "0"], captureErrors: true)
        defer { events.stop() }
        #expect(events.nextLine() != nil)
        daemon.crash()
        let message = try #require(events.nextErrorLine())
        #expect(message.hasPrefix("Error: "), "\(message)")
        #expect(events.exitStatus() != 0)
    }

    /// Holds every job of the default queue queued, across restarts (the pause is stored).
    static func pauseDefaultQueue(_ daemon: TestDaemon) throws {
        let set = try daemon.orchctl(["queue", "set", "default", "--concurrency", "1"])
        try #require(set.status == 0, "\(set)")
        let paused = try daemon.orchctl(["pause", "default"])
        try #require(paused.status == 0, "\(paused)")
    }
}
