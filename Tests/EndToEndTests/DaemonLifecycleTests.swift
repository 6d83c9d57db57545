import CPosix
import Foundation
import Glibc
import Orchestrator
import OrchestratorAPI
import Testing
import TestWaitLimits

/// orchd as a service: readiness, shutdown, restart, crash and misuse.
@Suite("Daemon life end to end")
struct DaemonLifecycleTests {
    @Test("READY=1 is sent once the socket exists, and STOPPING=1 on SIGTERM, then exit 0")
    func notifyReadyAndStopping() throws {
        let daemon = try TestDaemon()
        // TestDaemon returned after READY=1, so the socket must already be there.
        var info = stat()
        #expect(lstat(daemon.socketPath, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK)
        #expect(try daemon.orchctl(["ping"]).status == 0)

        let process = try #require(daemon.process)
        kill(process.processIdentifier, SIGTERM)
        #expect(daemon.notify.waitFor("STOPPING=1") != nil)
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == 0, "\(daemon.daemonLog)")
        #expect(access(daemon.socketPath, F_OK) != 0, "the socket file is removed on exit")
        // One line says each: the daemon_ready and daemon_stopping events add none on stderr.
        let log = daemon.daemonLog
        #expect(log.components(separatedBy: " ready").count == 2, "\(log)")
        #expect(log.components(separatedBy: "stopping").count == 2, "\(log)")
    }

    @Test("finished jobs and their output survive a restart")
    func restartKeepsJobs() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--wait", "--", "echo", "kept"])
        #expect(id.status == 0)
        #expect(daemon.stop() == 0)
        try daemon.start()
        let status = try daemon.orchctl(["status"])
        #expect(status.status == 0)
        #expect(status.standardOutput.contains("echo kept"), "\(status)")
        let jobs = try JSONSerialization.jsonObject(with: Data(try daemon.orchctl(["status", "--json"]).standardOutput.utf8)) as? [[String: Any]]
        let jobID = try #require(jobs?.first?["id"] as? Int)
        #expect(try daemon.orchctl(["logs", String(jobID)]).standardOutput == "kept\n")
    }

    @Test("SIGTERM tears down running jobs and records them interrupted; queued jobs run after restart")
    func shutdownWithRunningJobs() throws {
        let daemon = try TestDaemon(concurrency: 1)
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let running = try daemon.orchctl(["submit", "--", "sh", "-c", "echo $$ > '\(marker.path)'; sleep 300"]).line
        let group = try #require(marker.read().flatMap { Int32($0) })
        let queued = try daemon.orchctl(["submit", "--", "echo", "later"]).line
        #expect(daemon.stop() == 0, "\(daemon.daemonLog)")
        #expect(ProcessGroup(id: group).isGone, "the running job's group is gone")

        try daemon.start()
        let shown = try daemon.orchctl(["show", running, "--json"])
        #expect(shown.standardOutput.contains("interrupted"), "\(shown)")
        #expect(try daemon.orchctl(["wait", queued]).status == 0)
        #expect(try daemon.orchctl(["logs", queued]).standardOutput == "later\n")
    }

    @Test("after kill -9, the next start replaces the stale socket and finishes the orphaned job as interrupted")
    func crashRecovery() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "echo $$ > '\(marker.path)'; sleep 300"]).line
        let group = try #require(marker.read().flatMap { Int32($0) })
        daemon.crash()
        #expect(access(daemon.socketPath, F_OK) == 0, "kill -9 leaves the socket file behind")

        try daemon.start()
        #expect(ProcessGroup(id: group).isGone, "the surviving job was killed, not run twice")
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 1)
        let shown = try daemon.orchctl(["show", id, "--json"])
        #expect(shown.standardOutput.contains("interrupted"), "\(shown)")
    }

    @Test("after kill -9, a queue whose last live job recovery ends records queue_drained and runs its hook")
    func crashRecoveryDrainsQueue() throws {
        let daemon = try TestDaemon()
        let drained = try ReadyMarker(path: daemon.directory + "/drained")
        #expect(try daemon.orchctl(["queue", "add", "qq", "--on", "queue_drained=echo drained > '\(drained.path)'"]).status == 0)
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--queue", "qq", "--", "sh", "-c", "echo $$ > '\(marker.path)'; sleep 300"]).line
        #expect(marker.read() != nil)
        daemon.crash()
        try daemon.start()
        #expect(try daemon.orchctl(["wait", id]).status != 0, "recorded interrupted")
        #expect(drained.read() == "drained", "the queue's drain hook ran")
        let kinds = try daemon.orchctl(["events", "--queue", "qq"]).standardOutput.split(separator: "\n")
            .map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)).kind.rawValue }
        #expect(kinds.suffix(2) == ["finished", "queue_drained"], "\(kinds)")
    }

    @Test("after kill -9, a job interrupted with retries left waits its queue's retry backoff, not the default one")
    func crashRecoveryRetriesByQueueBackoff() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "slow", "--retry-base", "1h", "--retry-cap", "1h"]).status == 0)
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl([
            "submit", "--queue", "slow", "--retries", "1", "--", "sh", "-c", "echo $$ > '\(marker.path)'; sleep 300",
        ]).line
        #expect(marker.read() != nil)
        daemon.crash()
        try daemon.start()
        let shown = try daemon.orchctl(["show", id, "--json"])
        let job = try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any], "\(shown)")
        #expect(job["state"] as? String == "waiting", "\(shown)")
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let notBefore = try #require((job["notBefore"] as? String).flatMap { format.date(from: $0) }, "\(shown)")
        // The first retry waits between half and all of the base: 30 to 60 minutes here.
        #expect(notBefore.timeIntervalSinceNow > 25 * 60, "retried at \(notBefore), by the default 1 s backoff")
    }

    @Test("a second orchd on the same state directory refuses to start with a clear error")
    func secondDaemonRefused() throws {
        let daemon = try TestDaemon()
        let second = try TestDaemon.run(Binaries.orchd, ["--state-dir", daemon.stateDirectory, "--socket", daemon.directory + "/other.sock"])
        #expect(second.status == 1)
        #expect(second.standardError.contains("already running"), "\(second)")
        #expect(try daemon.orchctl(["ping"]).status == 0, "the first daemon is untouched")
    }

    @Test("a state directory that cannot be made or used is named as the state directory in orchd's error")
    func unusableStateDirectory() throws {
        let daemon = try TestDaemon()  // for its directory; its state directory is another
        let file = daemon.directory + "/file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        for stateDirectory in [file, file + "/sub"] {
            let result = try TestDaemon.run(Binaries.orchd, ["--state-dir", stateDirectory, "--socket", daemon.directory + "/other.sock"])
            #expect(result.status == 1, "\(result)")
            #expect(result.standardError.contains("cannot use the state directory \(stateDirectory): "), "\(result)")
            #expect(result.standardError.contains("Not a directory"), "\(result)")
        }
    }

    @Test("a second orchd on the same socket refuses instead of stealing it")
    func liveSocketNotStolen() throws {
        let daemon = try TestDaemon()
        let second = try TestDaemon.run(Binaries.orchd, ["--state-dir", daemon.directory + "/other-state", "--socket", daemon.socketPath])
        #expect(second.status == 1)
        #expect(second.standardError.contains("already listening"), "\(second)")
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("orchctl without a daemon exits 69 and says how to start one")
    func unreachableDaemon() throws {
        let result = try TestDaemon.run(Binaries.orchctl, ["--socket", "/tmp/orchd-no-such-dir/orchd.sock", "status"])
        #expect(result.status == 69)
        #expect(result.standardError.contains("orchd"), "\(result)")
    }

    @Test("orchd rejects bad flags with exit 64")
    func badDaemonFlags() throws {
        let unknown = try TestDaemon.run(Binaries.orchd, ["--bogus"])
        #expect(unknown.status == 64)
        #expect(unknown.standardError.hasPrefix("Error: "))
        let badConcurrency = try TestDaemon.run(Binaries.orchd, ["--concurrency", "0"])
        #expect(badConcurrency.status == 64)
        for arguments in [["stray"], ["--json"], ["--concurrency=0"], ["--state-dir"]] {
            let refused = try TestDaemon.run(Binaries.orchd, arguments)
            #expect(refused.status == 64, "\(arguments): \(refused)")
            #expect(refused.standardError.hasPrefix("Error: ") && refused.standardError.contains("\nUsage: orchd [--state-dir <dir>]"), "\(refused)")
            #expect(refused.standardError.hasSuffix("See 'orchd --help'.\n"), "\(refused)")
        }
    }

    @Test("orchd --help and -h print the help rendered from its option declarations (the golden file) and exit 0")
    func daemonHelp() throws {
        let golden = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "OrchestratorTests/Golden/orchd-help.txt")
        let expected = String(decoding: try Data(contentsOf: golden), as: UTF8.self)
        for flag in ["--help", "-h"] {
            let help = try TestDaemon.run(Binaries.orchd, [flag])
            #expect(help.status == 0 && help.standardOutput == expected, "\(help)")
        }
    }

    @Test("with a drain timeout, SIGTERM lets a running job finish by itself and extends systemd's stop timeout")
    func drainOnStop() throws {
        let daemon = try TestDaemon(arguments: ["--drain-timeout", "30s"])
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "echo go > '\(marker.path)'; cat '\(gate)'"]).line
        #expect(marker.read() != nil)
        let queued = try daemon.orchctl(["submit", "--", "true"]).line
        let process = try #require(daemon.process)
        kill(process.processIdentifier, SIGTERM)
        #expect(daemon.notify.waitFor("STOPPING=1") != nil)
        #expect(daemon.notify.waitFor("EXTEND_TIMEOUT_USEC=10000000") != nil, "the stop timeout is extended while draining")
        // The job is still running during the drain; let it finish on its own.
        try release(gate: gate)
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == 0)
        try daemon.start()
        #expect(try daemon.orchctl(["show", id, "--json"]).standardOutput.contains("\"succeeded\""), "it finished, not torn down")
        #expect(try daemon.orchctl(["wait", queued]).status == 0, "the queued job did not start during the drain, and runs now")
    }

    @Test("orchd is a child subreaper: a job's orphaned background process is reaped, no zombie remains")
    func orphansReaped() throws {
        let daemon = try TestDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/orphan")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        // An inner shell exits at once, orphaning its background child, while the job goes on
        // (a job's leftovers are torn down when it ends, so the orphan is looked at before).
        // The job reports the orphan's pid only after the inner shell has exited.
        let pidFile = daemon.directory + "/orphan.pid"
        let script = "sh -c 'sleep 300 >/dev/null 2>&1 & echo $! > \(pidFile)'; cat '\(pidFile)' > '\(marker.path)'; cat '\(gate)'"
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", script]).line
        let orphan = try #require(marker.read().flatMap { Int32($0) })
        let daemonPID = try #require(daemon.process?.processIdentifier)
        // Its parent exited: the subreaper, orchd, is its parent now (field 4 of
        // /proc/PID/stat is the parent pid). Then it is killed, and must not stay a zombie.
        let pidfd = cposix_pidfd_open(orphan)
        let before = (try? String(contentsOfFile: "/proc/\(orphan)/stat", encoding: .utf8)) ?? ""
        let parent = before.split(separator: ")").last?.split(separator: " ").dropFirst(1).first
        #expect(parent == Substring(String(daemonPID)), "orphans are reparented to orchd, not to init")
        kill(orphan, SIGKILL)
        if pidfd >= 0 {
            var pollFD = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pollFD, 1, 10_000)
            close(pidfd)
        }
        // Reaping follows its SIGCHLD; each ping is a round trip through the daemon.
        var zombie = true
        for _ in 0..<200 where zombie {
            _ = try daemon.orchctl(["ping"])
            let stat = (try? String(contentsOfFile: "/proc/\(orphan)/stat", encoding: .utf8)) ?? ""
            zombie = stat.contains(") Z ")
        }
        #expect(!zombie, "the orphan was reaped by orchd")
        try release(gate: gate)
        #expect(try daemon.orchctl(["wait", id]).status == 0)
    }
}
