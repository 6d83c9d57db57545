import Foundation
import Glibc
import Testing
import TestWaitLimits

/// The retention limits hold while orchd runs, not only from its next start: nothing here
/// restarts the daemon.
@Suite("Retention limits end to end")
struct RetentionTests {
    /// Submits `count` jobs running `true` in one batch and returns their IDs.
    @discardableResult
    private func submitBatch(_ daemon: TestDaemon, count: Int, queue: String = "default") throws -> [String] {
        if queue != "default" { try #require(daemon.orchctl(["queue", "add", queue]).status == 0) }
        let batch = try daemon.orchctl(
            ["submit", "--queue", queue, "--batch", "-"], input: String(repeating: "true\n", count: count))
        try #require(batch.status == 0, "\(batch)")
        return batch.standardOutput.split(separator: "\n").map(String.init)
    }

    @Test("prune --all deletes finished jobs whose rows fill more than 4 MiB in one statement (SQLite's statement journal spills to a file)")
    func pruneOfLargeRows() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let padding = String(repeating: "z", count: 4000)
        let lines = (0..<1500).map { "echo \($0) \(padding)\n" }.joined()
        let batch = try daemon.orchctl(["submit", "--batch", "-"], input: lines)
        try #require(batch.status == 0, "\(batch)")
        #expect(try daemon.orchctl(["cancel", "--state", "queued"]).status == 0)
        let pruned = try daemon.orchctl(["prune", "--all"])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(pruned.standardOutput.contains("1500") || pruned.standardOutput.contains("1,500"), "\(pruned)")
        #expect(!daemon.daemonLog.contains("full"), "\(daemon.daemonLog)")
    }

    @Test("--event-retention bounds the event log while jobs run (at most 1% over the limit)")
    func eventRetention() throws {
        let daemon = try TestDaemon(arguments: ["--event-retention", "1000"])
        try submitBatch(daemon, count: 400)  // 1,200 job events, and a few more
        #expect(try daemon.orchctl(["wait", "--all"]).status == 0)
        let events = try daemon.orchctl(["events", "--since", "0"])
        #expect(events.status == 0)
        let lines = events.standardOutput.split(separator: "\n")
        #expect((1000...1010).contains(lines.count), "\(lines.count) events retained")
        let last = try #require(lines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(last["kind"] as? String == "queue_drained", "the newest events are the ones kept: \(last)")
    }

    @Test("--retention-count keeps the newest finished jobs while jobs run, and one a live job depends on")
    func retentionCount() throws {
        let daemon = try TestDaemon(arguments: ["--retention-count", "50"])
        let needed = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        let dependent = try daemon.orchctl(["submit", "--after", needed, "--delay", "1h", "--", "true"]).line
        let batch = try submitBatch(daemon, count: 200, queue: "bulk")
        try #require(batch.count == 200)
        #expect(try daemon.orchctl(["wait", "--queue", "bulk", "--drained"]).status == 0)
        let listed = try daemon.orchctl(["status", "--state", "finished", "--all", "--json"])
        let finished = try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]])
        #expect(finished.count == 50, "\(finished.count) finished jobs kept")
        let ids = finished.compactMap { $0["id"] as? Int }
        #expect(ids.contains(Int(needed) ?? 0), "a job a live job depends on is kept")
        #expect(ids.contains(Int(batch[199]) ?? 0), "the newest job is kept")
        let logs = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/logs")
        #expect(logs.count <= 100, "pruned jobs' logs are deleted: \(logs.count) files")
        #expect(try daemon.orchctl(["cancel", dependent]).status == 0)
    }

    @Test("a wait answers with the jobs it waited for even when the retention count pruned one meanwhile")
    func waitOutlivesPrune() throws {
        let daemon = try TestDaemon(arguments: ["--retention-count", "1"])
        let first = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        let second = try daemon.orchctl(["submit", "--delay", "1s", "--", "true"]).line
        let waited = try daemon.orchctl(["wait", first, second])
        #expect(waited.status == 0, "\(waited)")
        #expect(try daemon.orchctl(["show", first]).status == 1, "pruned when the second finished")
    }

    @Test("submit --wait says so when a retention limit deleted its job before the wait reached orchd")
    func submitWaitAfterPrune() throws {
        let daemon = try TestDaemon(arguments: ["--retention-count", "1"])
        // orchctl prints the ID before it sends the wait: a full pipe holds it there.
        let output = Pipe()
        let writer = output.fileHandleForWriting.fileDescriptor
        let flags = fcntl(writer, F_GETFL)
        _ = fcntl(writer, F_SETFL, flags | O_NONBLOCK)
        let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        var filled = 0
        while write(writer, filler, filler.count) > 0 { filled += filler.count }
        _ = fcntl(writer, F_SETFL, flags)
        let errors = Pipe()
        let held = Process()
        held.executableURL = URL(fileURLWithPath: Binaries.orchctl)
        held.arguments = ["--socket", daemon.socketPath, "submit", "--wait", "--", "true"]
        held.standardOutput = output
        held.standardError = errors
        try held.run()
        // The first job of a new orchd is job 1, once the held orchctl has submitted it; the
        // second's end makes retention delete it.
        let submitted = Date().addingTimeInterval(30)
        while try daemon.orchctl(["show", "1"]).status != 0, Date() < submitted {}
        #expect(try daemon.orchctl(["wait", "1"]).status == 0)
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
        let deadline = Date().addingTimeInterval(30)
        while try daemon.orchctl(["show", "1"]).status == 0, Date() < deadline {}
        var printed = Data()
        var said = ""
        let exited = waiting(for: held.processIdentifier, atMost: TestDaemon.commandTimeLimit) {
            printed = output.fileHandleForReading.readDataToEndOfFile()
            held.waitUntilExit()
            said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        #expect(exited, "the held orchctl did not exit")
        #expect(printed.count == filled + 2, "the filler and the ID")
        #expect(held.terminationStatus == 1)
        #expect(said == "Error: job 1 finished, but was deleted before its result could be read: a retention limit of orchd's (--retention-count, --retention-age) or an 'orchctl prune' took it\n", "\(said)")
    }

    @Test("--retention-age prunes finished jobs once they are that old, while orchd runs, but not one a live job depends on")
    func retentionAge() throws {
        let daemon = try TestDaemon(arguments: ["--retention-age", "1s"])
        let old = try daemon.orchctl(["submit", "--wait", "--", "echo", "old"]).line
        let needed = try daemon.orchctl(["submit", "--wait", "--", "true"]).line
        let dependent = try daemon.orchctl(["submit", "--after", needed, "--delay", "1h", "--", "true"]).line
        // Starts well after `old` is a second old; the prune is due first.
        let later = try daemon.orchctl(["submit", "--delay", "3s", "--", "true"]).line
        #expect(try daemon.orchctl(["wait", later]).status == 0)
        #expect(try daemon.orchctl(["show", old]).status == 1, "pruned by age")
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/logs/0/\(old).1.out"))
        #expect(try daemon.orchctl(["show", needed]).status == 0, "kept: job \(dependent) depends on it")

        // Once nothing live depends on it, it goes too, without waiting for another job to age.
        #expect(try daemon.orchctl(["cancel", dependent]).status == 0)
        let marker = try daemon.orchctl(["submit", "--delay", "1s", "--", "true"]).line
        #expect(try daemon.orchctl(["wait", marker]).status == 0)
        #expect(try daemon.orchctl(["show", needed]).status == 1, "pruned once its dependent finished")
    }

    /// How many finished jobs orchd still lists.
    private func finishedCount(_ daemon: TestDaemon) throws -> Int {
        let listed = try daemon.orchctl(["status", "--state", "finished", "--all", "--json"])
        try #require(listed.status == 0, "\(listed)")
        return try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]]).count
    }

    /// Reloads `text` as the configuration file and waits for the reload's READY=1.
    private func reload(_ daemon: TestDaemon, _ text: String) throws {
        try daemon.writeConfiguration(text)
        let reloaded = try daemon.orchctl(["reload"])
        try #require(reloaded.status == 0, "\(reloaded)")
        try #require(daemon.notify.waitFor("READY=1", timeout: 30) != nil)
    }

    /// Polls `condition` for up to 30 s: a prune runs a page per turn after the reload's answer.
    private func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if try condition() { return true }
        }
        return false
    }

    @Test("a reload changes the retention limits at once: a lowered one prunes, a key taken out of the file lifts its limit")
    func reloadChangesRetention() throws {
        let daemon = try TestDaemon()
        try submitBatch(daemon, count: 400)  // 1,200 job events, and a few more
        #expect(try daemon.orchctl(["wait", "--all"]).status == 0)
        #expect(try finishedCount(daemon) == 400)

        try reload(daemon, "retention-count = 2\nevent-retention = 1000\n")
        #expect(try eventually { try finishedCount(daemon) == 2 }, "pruned to the reloaded count")
        let events = try daemon.orchctl(["events", "--since", "0"])
        #expect((1000...1010).contains(events.standardOutput.split(separator: "\n").count), "trimmed to the reloaded event retention")

        try reload(daemon, "")
        try submitBatch(daemon, count: 3)
        #expect(try daemon.orchctl(["wait", "--all"]).status == 0)
        #expect(try finishedCount(daemon) == 5, "no count limit once the key is gone")

        try reload(daemon, "retention-age = 1s\n")
        #expect(try eventually { try finishedCount(daemon) == 0 }, "pruned by the reloaded age")
    }
}
