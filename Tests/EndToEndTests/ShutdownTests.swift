import Foundation
import Glibc
import Orchestrator
import OrchestratorAPI
import Synchronization
import Testing
import TestWaitLimits

/// `orchctl shutdown`, and `scripts/install.sh` starting orchd outside systemd.
@Suite("Shutdown and install end to end")
struct ShutdownTests {
    @Test("orchctl shutdown --wait stops orchd as SIGTERM does: exit 0, socket gone, a running job interrupted, a queued one kept")
    func shutdownLikeSIGTERM() throws {
        let daemon = try TestDaemon(concurrency: 1)
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let running = try daemon.orchctl(["submit", "--", "sh", "-c", "echo $$ > '\(marker.path)'; sleep 300"]).line
        let group = try #require(marker.read().flatMap { Int32($0) })
        let queued = try daemon.orchctl(["submit", "--", "echo", "later"]).line
        let process = try #require(daemon.process)

        let shutdown = try daemon.orchctl(["shutdown", "--wait"])
        #expect(shutdown.status == 0, "\(shutdown)")
        #expect(shutdown.standardOutput == "stopping\n")
        #expect(access(daemon.socketPath, F_OK) != 0, "--wait returns once the socket is gone")
        #expect(daemon.notify.waitFor("STOPPING=1") != nil)
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == 0, "\(daemon.daemonLog)")
        #expect(ProcessGroup(id: group).isGone, "the running job's group is gone")
        #expect(daemon.daemonLog.contains("shutdown requested by pid"))

        try daemon.start()
        let shown = try daemon.orchctl(["show", running, "--json"])
        #expect(shown.standardOutput.contains("interrupted"), "\(shown)")
        #expect(try daemon.orchctl(["wait", queued]).status == 0)
        #expect(try daemon.orchctl(["logs", queued]).standardOutput == "later\n")
    }

    @Test("listings streamed with more whose clients hang up after the first bytes are ended: a stop does not wait for them")
    func abandonedStreamsDoNotHoldTheStop() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        #expect(try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 3000)).status == 0)
        for _ in 0..<10 {
            let socket = try RawSocket(path: daemon.socketPath)
            #expect(socket.send(Array(#"{"method":"io.orchd.Jobs.List","more":true,"parameters":{}}"#.utf8) + [0]))
            #expect(socket.waitReadable(timeout: 30), "the stream began")
        }
        let shutdown = try daemon.orchctl(["shutdown", "--wait"])
        #expect(shutdown.status == 0, "\(shutdown)")
        #expect(!daemon.daemonLog.contains("still unanswered"), "\(daemon.daemonLog)")
    }

    @Test("orchd's log says what stopped it: orchctl shutdown by its caller's pid and uid, with no SIGTERM that nobody sent; a SIGTERM that came as received")
    func logNamesWhatStoppedIt() throws {
        let daemon = try TestDaemon()
        let process = try #require(daemon.process)
        let shutdown = try daemon.orchctl(["shutdown", "--wait"])
        #expect(shutdown.status == 0, "\(shutdown)")
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        let byShutdown = daemon.daemonLog
        let request = byShutdown.split(separator: "\n").filter { $0.contains("shutdown requested by pid ") }
        #expect(request.count == 1 && request[0].hasSuffix(" (uid \(getuid())), stopping"), "\(byShutdown)")
        #expect(!byShutdown.contains("SIGTERM"), "\(byShutdown)")

        try daemon.start()
        #expect(daemon.stop() == 0, "\(daemon.daemonLog)")
        // Each start begins a new log.
        let bySignal = daemon.daemonLog
        #expect(bySignal.contains(" received SIGTERM, stopping\n"), "\(bySignal)")
        #expect(!bySignal.contains("shutdown requested"), "\(bySignal)")
    }

    @Test("orchctl shutdown --wait returns once orchd has exited: its state directory's lock is free and the next orchd starts on it at once")
    func shutdownWaitOutlastsTheProcess() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        // A WAL of thousands of jobs for the last checkpoint to write, after the connections close.
        let batch = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 5_000))
        #expect(batch.status == 0, "\(batch)")

        let shutdown = try daemon.orchctl(["shutdown", "--wait"])
        #expect(shutdown.status == 0, "\(shutdown)")
        let lock = open(daemon.stateDirectory + "/orchd.lock", O_RDWR | O_CLOEXEC)
        #expect(lock >= 0)
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0, "orchd still held its state directory's lock after shutdown --wait returned")
        close(lock)

        try daemon.start()
        let status = try daemon.orchctl(["status"])
        #expect(status.standardOutput.contains("5,000 queued"), "\(status)")
    }

    @Test("while orchd stops, a submit is refused with a clear error (exit 69) and nothing is stored")
    func submitWhileStopping() throws {
        let (daemon, running) = try Self.drainingDaemon()

        for arguments in [["--", "true"], ["--wait", "--", "true"]] {
            let refused = try daemon.orchctl(["submit", "--reconnect-timeout", "0"] + arguments)
            #expect(refused.status == 69, "\(refused)")
            #expect(refused.standardError.contains("orchd is stopping and takes no new jobs, so nothing was stored"), "\(refused)")
        }
        let batch = try daemon.orchctl(["submit", "--batch", "-", "--reconnect-timeout", "0"], input: "true\ntrue\n")
        #expect(batch.status == 69, "\(batch)")

        daemon.crash()
        try daemon.start()
        let listed = try daemon.orchctl(["status", "--all", "--json"])
        let jobs = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]] ?? []
        #expect(jobs.compactMap { $0["id"] as? Int }.map(String.init) == [running], "only the job from before the stop: \(listed)")
    }

    @Test("submits sent one after another as orchd stops each get an answer, or a reset that says orchd never read them: none is lost unanswered, and the jobs stored are the ones acknowledged")
    func submitsAnsweredThroughStop() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        var acknowledged = 0
        for _ in 0..<4 {
            // A connection that submits until orchd's stop ends it, on its own thread.
            let outcome = Mutex<(stored: Int, end: VarlinkClientError?)>((0, nil))
            let finished = DispatchSemaphore(value: 0)
            let submitted = DispatchSemaphore(value: 0)
            Thread.detachNewThread { [socket = daemon.socketPath] in
                let spec = JobSpec(command: .argv(["true"]), cwd: "/", environment: [:])
                let client: VarlinkClient
                do throws(VarlinkClientError) {
                    client = try VarlinkClient.limited(socketPath: socket)
                } catch {
                    outcome.withLock { $0.end = error }
                    finished.signal()
                    return
                }
                while true {
                    do throws(VarlinkClientError) {
                        _ = try client.call(JobsInterface.submit, JobsInterface.SubmitParameters(spec: spec))
                        if outcome.withLock({ $0.stored += 1; return $0.stored }) == 50 { submitted.signal() }
                    } catch {
                        outcome.withLock { $0.end = error }
                        break
                    }
                }
                finished.signal()
            }
            #expect(submitted.wait(timeout: .now() + 60) == .success)
            _ = daemon.stop()
            #expect(finished.wait(timeout: .now() + 60) == .success)
            let (stored, end) = outcome.withLock { $0 }
            switch end {
            case .remote(let error)? where error.name == JobsInterface.Errors.stopping: break
            case .callNotDelivered?: break
            // The connection closed after the last call was sent, but before orchd answered it:
            // orchd read a call (else the kernel resets the connection) and left it unanswered.
            default: Issue.record("a submit ended with \(String(describing: end))")
            }
            acknowledged += stored
            try daemon.start()
        }
        let info = try JSONSerialization.jsonObject(with: Data(try daemon.orchctl(["info", "--json"]).standardOutput.utf8)) as? [String: Any]
        #expect((info?["jobs"] as? [String: Any])?["queued"] as? Int == acknowledged, "the acknowledged submits, each stored once")
    }

    @Test("a stop sends the whole of a large reply its client has not read yet before it closes the connection")
    func stopSendsPendingReply() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let batch = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 3_000))
        try #require(batch.status == 0, "\(batch)")
        let socket = try RawSocket(path: daemon.socketPath)
        // About 1.4 MB, more than the socket holds: once its start arrives, the rest waits in
        // orchd's outbox while the stop begins.
        #expect(socket.send(Array(#"{"method":"io.orchd.Jobs.List","parameters":{}}"#.utf8) + [0]))
        #expect(socket.waitReadable(timeout: 30))
        try daemon.send(SIGTERM)
        let (messages, closed) = socket.readMessages(untilClosed: true, timeout: 30)
        #expect(closed && messages.count == 1, "\(messages.count) messages")
        let reply = try messages.first.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any]
        #expect(((reply?["parameters"] as? [String: Any])?["jobs"] as? [Any])?.count == 3_000, "the whole reply")
        #expect(daemon.stop() == 0)
    }

    @Test("a long submit --batch goes on through a restart of orchd: each job is stored once, whether the stop comes between its transactions or while one is being sent")
    func batchThroughRestart() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        let file = daemon.directory + "/jobs"
        try String(repeating: "true\n", count: 30_000).write(toFile: file, atomically: true, encoding: .utf8)
        let submit = try OrchctlStream(daemon, ["submit", "--batch", file], captureErrors: true)
        defer { submit.stop() }
        // The first transaction's IDs are out; the rest are being sent as orchd stops.
        let first = try #require(submit.nextLine())
        daemon.stop()
        try daemon.start()
        let rest = try #require(submit.rest(timeout: 120))
        let ids = [first] + rest.split(separator: "\n").map(String.init)
        #expect(submit.exitStatus() == 0, "\(submit.nextErrorLine(timeout: 1) ?? "")")
        #expect(ids.count == 30_000 && Set(ids).count == 30_000, "\(ids.count) IDs")
        let info = try JSONSerialization.jsonObject(with: Data(try daemon.orchctl(["info", "--json"]).standardOutput.utf8)) as? [String: Any]
        #expect((info?["jobs"] as? [String: Any])?["queued"] as? Int == 30_000, "every job stored once")
    }

    @Test("submits refused while orchd stops are sent again and stored once by the next orchd")
    func submitThroughRestart() throws {
        let (daemon, running) = try Self.drainingDaemon()

        let batchFile = daemon.directory + "/batch"
        try "true\ntrue\n".write(toFile: batchFile, atomically: true, encoding: .utf8)
        let submits = try [["submit", "--", "true"], ["submit", "--wait", "--", "true"], ["submit", "--batch", batchFile]].map {
            try OrchctlStream(daemon, $0, captureErrors: true)
        }
        defer { for submit in submits { submit.stop() } }
        for submit in submits {
            let message = try #require(submit.nextErrorLine(), "each submit says once that it waits")
            #expect(message.contains("is stopping and took nothing; submitting again for up to 1min"), "\(message)")
        }

        // The drain ends with the running job; the stopping orchd exits, a new one starts.
        let cancelled = try daemon.orchctl(["cancel", running])
        #expect(cancelled.status == 0, "\(cancelled)")
        let stopping = try #require(daemon.process)
        #expect(stopping.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "the stopping orchd did not exit")
        #expect(stopping.terminationStatus == 0, "\(daemon.daemonLog)")
        try daemon.start()

        var submitted: [String] = []
        for (submit, count) in zip(submits, [1, 1, 2]) {
            for _ in 0..<count { submitted.append(try #require(submit.nextLine(), "an ID once the next orchd took the job")) }
            #expect(submit.exitStatus() == 0)
            #expect(submit.nextErrorLine(timeout: 1) == nil, "the message comes once")
        }
        let listed = try daemon.orchctl(["status", "--all", "--json"])
        let jobs = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]] ?? []
        let stored = jobs.compactMap { $0["id"] as? Int }.map(String.init)
        #expect(stored.sorted() == ([running] + submitted).sorted(), "each submit stored once: \(listed)")
    }

    /// A daemon stopping with SIGTERM, held in its drain (up to 120 s) by a running job.
    /// - Returns: the daemon and the running job's ID.
    private static func drainingDaemon() throws -> (TestDaemon, String) {
        let daemon = try TestDaemon(concurrency: 1, arguments: ["--drain-timeout", "120s"])
        let marker = try ReadyMarker(path: daemon.directory + "/started")
        let running = try daemon.orchctl(["submit", "--", "sh", "-c", "echo $$ > '\(marker.path)'; sleep 300"]).line
        _ = try #require(marker.read())
        try daemon.send(SIGTERM)
        #expect(daemon.waitForLog(containing: "draining:"), "\(daemon.daemonLog)")
        return (daemon, running)
    }

    @Test("a clean stop leaves the jobs in orchd.db and an empty WAL; the next start has them all")
    func cleanStopTruncatesWAL() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)  // the jobs stay queued
        let batch = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 2_000))
        #expect(batch.status == 0, "\(batch)")
        let ids = batch.standardOutput.split(separator: "\n").map(String.init)
        #expect(ids.count == 2_000, "\(batch)")
        let wal = daemon.stateDirectory + "/orchd.db-wal"
        #expect(try Self.size(wal) > 0, "the batch went through the WAL")

        #expect(daemon.stop() == 0, "\(daemon.daemonLog)")
        // Truncated, or removed: SQLite deletes the WAL when the last connection closes.
        let walBytes = access(wal, F_OK) == 0 ? try Self.size(wal) : 0
        #expect(walBytes == 0, "checkpointed into orchd.db and truncated")
        try daemon.start()
        for id in [ids[0], ids[1_999]] {
            let shown = try daemon.orchctl(["show", id, "--json"])
            #expect(shown.standardOutput.contains("queued"), "\(shown)")
        }
    }

    private static func size(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    @Test("orchctl shutdown without --wait prints 'stopping' and orchd exits 0; a second one finds nothing to reach")
    func shutdownWithoutWait() throws {
        let daemon = try TestDaemon()
        let process = try #require(daemon.process)
        let shutdown = try daemon.orchctl(["shutdown"])
        #expect(shutdown.status == 0, "\(shutdown)")
        #expect(shutdown.standardOutput == "stopping\n")
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == 0, "\(daemon.daemonLog)")
        let again = try daemon.orchctl(["shutdown"])
        #expect(again.status == 69, "\(again)")
    }

    @Test("scripts/install.sh piped into cat returns: the orchd it starts outside systemd keeps none of its output; running it again restarts orchd")
    func installScriptPiped() throws {
        let install = try StagedInstall()
        let (destination, log) = (install.destination, install.log)
        let command = "bash -c 'scripts/install.sh 2>&1 | cat'"
        let first = try install.run(command)
        #expect(first.status == 0, "\(first)")
        #expect(first.standardOutput.contains("orchd is running (no systemd here; log: \(log); stop it with: orchctl shutdown)"), "\(first)")
        for installed in ["/usr/local/bin/orchd", "/usr/local/bin/orchctl", "/etc/systemd/system/orchd.service",
                          "/etc/systemd/user/orchd.socket", "/etc/orchd/orchd.conf", "/usr/local/share/man/man1/orchctl.1",
                          "/usr/local/share/man/man8/orchd.8", "/usr/local/share/man/man5/orchd.conf.5", "/usr/local/share/bash-completion/completions/orchctl",
                          "/usr/local/share/zsh/site-functions/_orchctl", "/usr/local/share/fish/vendor_completions.d/orchctl.fish"] {
            #expect(access(destination + installed, F_OK) == 0, "\(installed) installed")
        }
        #expect(try install.orchctl(["ping"]).status == 0)
        let completion = try TestDaemon.run(
            "/bin/bash", ["-c", "source '\(destination)/usr/local/share/bash-completion/completions/orchctl' && complete -p orchctl"])
        #expect(completion.standardOutput == "complete -F _orchctl orchctl\n", "\(completion)")

        let second = try install.run(command)
        #expect(second.status == 0, "\(second)")
        #expect(second.standardOutput.contains("already running; restarting it"), "\(second)")
        // Its log tells a later failure apart: seen once in CI, the socket gone right after a
        // restart that had answered install.sh's ping; not reproduced since.
        let afterRestart = try install.orchctl(["ping"])
        #expect(afterRestart.status == 0, "\(afterRestart)\norchd's log:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")

        let stop = try install.orchctl(["shutdown", "--wait"])
        #expect(stop.status == 0, "\(stop)")
        #expect(access(install.socket, F_OK) != 0)
        let written = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(written.contains("stopped"), "orchd's output goes to its log")
    }

    @Test("scripts/uninstall.sh stops orchd and removes what install.sh made, nothing that was there before; the jobs, settings and log only with --purge, also after a plain uninstall")
    func uninstallScript() throws {
        let install = try StagedInstall()
        let (destination, log, state) = (install.destination, install.log, install.state)
        // A directory that was there before, with someone else's page in it.
        let foreign = destination + "/usr/local/share/man/man1/other.1"
        try FileManager.default.createDirectory(atPath: destination + "/usr/local/share/man/man1", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: foreign, contents: Data("other".utf8)))

        #expect(try install.run("scripts/install.sh").status == 0)
        let job = try install.orchctl(["submit", "--wait", "--", "true"])
        #expect(job.status == 0, "\(job)")
        let uninstall = try install.run("scripts/uninstall.sh")
        #expect(uninstall.status == 0, "\(uninstall)")
        #expect(uninstall.standardOutput.contains("stopped orchd"), "\(uninstall)")
        #expect(uninstall.standardOutput.contains("--purge removes them"), "\(uninstall)")
        #expect(access(install.socket, F_OK) != 0, "orchd was stopped")
        for removed in ["/usr/local/bin", "/etc/systemd", "/usr/local/share/man/man8", "/usr/local/share/orchd",
                        "/usr/local/share/bash-completion", "/usr/local/share/man/man1/orchctl.1"] {
            #expect(access(destination + removed, F_OK) != 0, "\(removed) removed")
        }
        for kept in ["/usr/local/share/man/man1/other.1", "/etc/orchd/orchd.conf"] {
            #expect(access(destination + kept, F_OK) == 0, "\(kept) kept")
        }
        #expect(access(state + "/orchd.db", F_OK) == 0, "the jobs are kept")
        #expect(access(log, F_OK) == 0, "the log is kept")
        let again = try install.run("scripts/uninstall.sh")
        #expect(again.status == 1, "\(again)")
        #expect(again.standardError.contains("scripts/install.sh did not install orchd here"), "\(again)")
        let unknown = try install.run("scripts/uninstall.sh --all")
        #expect(unknown.status == 64, "\(unknown)")

        // Installed again, the jobs are still there; --purge then removes them too.
        #expect(try install.run("scripts/install.sh").status == 0)
        let shown = try install.orchctl(["show", "1"])
        #expect(shown.status == 0, "\(shown)")
        let purge = try install.run("scripts/uninstall.sh --purge")
        #expect(purge.status == 0, "\(purge)")
        #expect(purge.standardOutput.contains("with its jobs, settings and log"), "\(purge)")
        for removed in [state, log, destination + "/etc/orchd", destination + "/usr/local/bin"] {
            #expect(access(removed, F_OK) != 0, "\(removed) removed")
        }
        #expect(try String(contentsOfFile: foreign, encoding: .utf8) == "other")

        // A staged tree that was moved uninstalls where it is, not where it was installed.
        #expect(try install.run("scripts/install.sh").status == 0)
        let moved = install.directory + "/moved"
        #expect(try TestDaemon.run("/bin/cp", ["-a", destination, moved]).status == 0)
        let relocated = try install.run("env DESTDIR='\(moved)' scripts/uninstall.sh")
        #expect(relocated.status == 0, "\(relocated)")
        #expect(access(moved + "/usr/local/bin/orchctl", F_OK) != 0, "removed from the tree named")
        #expect(access(destination + "/usr/local/bin/orchctl", F_OK) == 0, "the tree it was installed in is untouched")

        // --purge after a plain uninstall, as that one's last line says: what it kept goes.
        #expect(try install.run("scripts/uninstall.sh").status == 0)
        #expect(access(state + "/orchd.db", F_OK) == 0, "the jobs are kept")
        let purgeAfter = try install.run("scripts/uninstall.sh --purge")
        #expect(purgeAfter.status == 0 && purgeAfter.standardOutput.contains("removed what the earlier uninstall kept"), "\(purgeAfter)")
        for removed in [state, log, destination + "/etc/orchd"] {
            #expect(access(removed, F_OK) != 0, "\(removed) removed")
        }
        #expect(try install.run("scripts/uninstall.sh --purge").status == 1, "nothing left to purge")
        #expect(try String(contentsOfFile: foreign, encoding: .utf8) == "other")
    }

    @Test("a staged install (DESTDIR, relative too) without a socket, state directory or log of its own runs orchd on paths under DESTDIR, never the system's; uninstall stops that one, leaves another orchd on an exported ORCHD_SOCKET alone, and --purge leaves nothing")
    func stagedInstallKeepsToItsTree() throws {
        let install = try StagedInstall()
        let destination = install.destination
        let socket = destination + "/run/orchd/orchd.sock"
        defer { _ = try? TestDaemon.run(install.installedOrchctl, ["--socket", socket, "shutdown", "--wait"]) }
        // DESTDIR relative to where the script is started from, which is not where it works.
        let unset = "env -C '\(install.directory)' -u ORCHD_SOCKET -u ORCHD_STATE_DIR -u ORCHD_LOG DESTDIR=root"
        let installed = try install.run("\(unset) '\(install.repository)/scripts/install.sh'")
        #expect(installed.status == 0, "\(installed)")
        let ping = try TestDaemon.run(install.installedOrchctl, ["--socket", socket, "ping"])
        #expect(ping.status == 0, "orchd serves the socket under DESTDIR: \(ping)\n\(installed)")
        #expect(access(destination + "/var/lib/orchd/orchd.db", F_OK) == 0, "its state directory is under DESTDIR")
        #expect(access(destination + "/var/log/orchd.log", F_OK) == 0, "its log is under DESTDIR")

        // A stopped orchd does not answer: nothing is removed from under it.
        let info = try TestDaemon.run(install.installedOrchctl, ["--socket", socket, "--json", "info"])
        let pid = try #require((try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any])?["pid"] as? Int)
        kill(pid_t(pid), SIGSTOP)
        let stuck = try install.run("\(unset) '\(install.repository)/scripts/uninstall.sh' --purge")
        kill(pid_t(pid), SIGCONT)
        #expect(stuck.status == 1 && stuck.standardError.contains("does not answer"), "\(stuck)")
        #expect(access(install.installedOrchctl, X_OK) == 0, "nothing removed")

        // ORCHD_SOCKET exported for another orchd: that one is not this install's to stop.
        let other = try TestDaemon()
        let uninstall = try install.run("\(unset) ORCHD_SOCKET='\(other.socketPath)' '\(install.repository)/scripts/uninstall.sh' --purge")
        #expect(uninstall.status == 0 && uninstall.standardOutput.contains("stopped orchd"), "\(uninstall)")
        #expect(uninstall.standardOutput.contains("left alone: the orchd on \(other.socketPath)"), "\(uninstall)")
        #expect(try other.orchctl(["ping"]).status == 0, "the other orchd still runs")
        #expect(access(socket, F_OK) != 0, "this install's orchd was stopped")
        let left = try FileManager.default.contentsOfDirectory(atPath: destination)
        #expect(left.isEmpty, "--purge leaves nothing under DESTDIR: \(left)")

        let long = install.directory + "/" + String(repeating: "L", count: 100)
        let refused = try install.run("env -u ORCHD_SOCKET DESTDIR='\(long)' scripts/install.sh")
        #expect(refused.status == 64 && refused.standardError.contains("more than the 107 a Unix socket's path may have"), "\(refused)")
        #expect(access(long, F_OK) != 0, "nothing installed before the check")
    }
}
