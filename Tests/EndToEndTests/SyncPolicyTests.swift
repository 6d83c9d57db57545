import Foundation
import Glibc
import Testing

/// `--sync always|interval`: what a `kill -9` of orchd right after a reply may lose (nothing,
/// under either policy), and that `orchctl info` tells which is in force.
@Suite("Sync policy")
struct SyncPolicyTests {
    /// Submits a single job and a batch on a paused queue (so nothing changes them after),
    /// kills orchd with SIGKILL right after each reply, restarts it, and checks that every
    /// acknowledged job is there, queued.
    static func acknowledgedSurviveKill(_ daemon: TestDaemon) throws {
        #expect(try daemon.orchctl(["queue", "add", "held", "--concurrency", "1"]).status == 0)
        #expect(try daemon.orchctl(["pause", "held"]).status == 0)
        var acknowledged: [String] = []
        for round in 0..<3 {
            let single = try daemon.orchctl(["submit", "--queue", "held", "--", "echo", "single \(round)"])
            #expect(single.status == 0, "\(single)")
            acknowledged.append(single.line)
            daemon.crash()
            try daemon.start()
            let batch = try daemon.orchctl(
                ["submit", "--queue", "held", "--batch", "-"], input: (0..<50).map { "echo \(round) \($0)\n" }.joined())
            #expect(batch.status == 0, "\(batch)")
            acknowledged += batch.standardOutput.split(separator: "\n").map(String.init)
            daemon.crash()
            try daemon.start()
        }
        #expect(acknowledged.count == 153)
        let listed = try daemon.orchctl(["status", "--queue", "held", "--all", "--json"])
        #expect(listed.status == 0)
        let jobs = try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]])
        let stored = Set(jobs.compactMap { ($0["id"] as? Int).map(String.init) })
        let queued = jobs.allSatisfy { $0["state"] as? String == "queued" }
        #expect(queued, "every job is still queued")
        let lost = acknowledged.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "acknowledged, then lost to kill -9: \(lost)")
    }

    @Test("--sync always (the default): every acknowledged submit survives kill -9 right after the reply; info says always")
    func always() throws {
        let daemon = try TestDaemon()
        let info = try daemon.orchctl(["info"])
        #expect(info.standardOutput.contains("sync:") && info.standardOutput.contains("always"), "\(info)")
        try Self.acknowledgedSurviveKill(daemon)
    }

    @Test("--sync interval: kill -9 of orchd loses nothing acknowledged, even before the interval's fsync; info says interval")
    func interval() throws {
        // An hour: no timer-driven fsync can have run before the kill, so what survives was
        // only committed, as the policy promises for a crash of the process.
        let daemon = try TestDaemon(arguments: ["--sync", "interval", "--sync-interval", "1h"])
        let info = try daemon.orchctl(["info", "--json"])
        #expect(info.standardOutput.contains("\"sync\":\"interval\"") || info.standardOutput.contains("\"sync\" : \"interval\""), "\(info)")
        #expect(info.standardOutput.contains("3600000000"), "\(info)")
        #expect(try daemon.orchctl(["info"]).standardOutput.contains("interval, every 1h"))
        try Self.acknowledgedSurviveKill(daemon)
    }

    @Test("a bad --sync or --sync-interval is refused with what is expected")
    func badValues() throws {
        for (arguments, expected) in [
            (["--sync", "sometimes"], "is not one of always, interval"),
            (["--sync-interval", "0"], "from 1ms to 1h"),
            (["--sync-interval", "2h"], "from 1ms to 1h"),
            (["--sync-interval", "soon"], "--sync-interval"),
        ] {
            let result = try TestDaemon.run(Binaries.orchd, arguments)
            #expect(result.status != 0)
            #expect(result.standardError.contains(expected), "\(arguments): \(result.standardError)")
        }
    }
}
