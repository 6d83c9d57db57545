import CPosix
import Foundation
import Glibc
import Orchestrator
import Testing
import TestWaitLimits

/// Nothing a job starts escapes its teardown, not even processes that leave its process group
/// with setsid(2): under cancel, --timeout, daemon stop and kill -9 + restart, in both
/// containments (a cgroup per job, and the process-group fallback with its ORCHD_JOB_ID scan).
/// The same holds for hooks (a cgroup per hook run, or the ORCHD_HOOK_ID scan).
@Suite("Containment end to end")
struct ContainmentTests {
    /// One test daemon in one containment mode, with the checks the scenarios share.
    final class Fixture {
        let daemon: TestDaemon
        let mode: String
        /// The daemon's cgroup subtree, from `orchctl info` (cgroup mode).
        private(set) var cgroup: String?

        init(mode: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
            if mode == "cgroup" { try CgroupSupport.requireAvailable() }
            self.mode = mode
            daemon = try TestDaemon(arguments: ["--containment", mode] + arguments, environment: environment)
            try readInfo()
        }

        deinit {
            daemon.crash()
            CgroupSupport.cleanUp(stateDirectory: daemon.stateDirectory, cgroup: cgroup)
        }

        /// Checks that `orchctl info` reports the containment asked for.
        func readInfo() throws {
            let info = try daemon.orchctl(["info", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
            #expect(object?["containment"] as? String == mode, "\(info)")
            cgroup = object?["cgroup"] as? String
            #expect((cgroup != nil) == (mode == "cgroup"), "\(info)")
            #expect(try daemon.orchctl(["info"]).standardOutput.contains("containment:     \(mode)"))
        }

        /// A shell script that starts a process in a new session (escaping the job's process
        /// group) which writes its pid to `marker` and sleeps; the script itself then runs
        /// `then`.
        func escapingScript(marker: String, then: String = "sleep 900") -> String {
            "setsid sh -c 'echo $$ > \(marker); exec sleep 900' & \(then)"
        }

        /// Writes a script that logs its pid to `hops` in the daemon's directory, starts itself
        /// again in a new session and exits at once, ignoring SIGTERM: a chain whose one live
        /// process is forever moving, so that a look catching it handing its successor over
        /// to its new parent finds nothing. A `stop` file beside it ends the chain.
        /// - Returns: a job script that starts the chain and, once the first link has logged,
        ///   writes to `marker` and runs `then`.
        func hopChainScript(marker: String, then: String = "sleep 900") throws -> String {
            let directory = daemon.directory
            let hop = directory + "/hop.sh"
            try "trap '' TERM\n[ -e \(directory)/stop ] && exit 0\necho $$ >> \(directory)/hops\nsetsid sh \(hop) &\n"
                .write(toFile: hop, atomically: true, encoding: .utf8)
            unlink(directory + "/hops")
            return "setsid sh \(hop) & while [ ! -s \(directory)/hops ]; do sleep 0.01; done; echo go > \(marker); \(then)"
        }

        /// Ends any chain of ``hopChainScript(marker:)`` at its next link.
        func stopHopChain() {
            _ = creat(daemon.directory + "/stop", 0o600)
        }

        /// Whether the process is gone (or a zombie waiting to be reaped).
        func isGone(_ pid: Int32) -> Bool {
            ProcessGroup(id: pid).isGone
        }

        /// Whether the process group led by `pid` is gone within 10 s, waited for by its
        /// members' exits: one killed as orchd exits may take a moment to die.
        func becomesGone(_ pid: Int32) -> Bool {
            ProcessGroup(id: pid).waitUntilGone(timeout: .seconds(10))
        }

        /// The job processes still alive.
        var leftovers: [Int32] {
            CgroupSupport.liveJobProcesses(stateDirectory: daemon.stateDirectory)
        }

        /// The hook cgroups in the daemon's subtree.
        var hookCgroups: [String] {
            cgroup.map { Cgroup(path: $0).children().filter { $0.hasPrefix("hook-") } } ?? []
        }

        /// The job cgroups in the daemon's subtree.
        var jobCgroups: [String] {
            cgroup.map { Cgroup(path: $0).children().filter { $0.hasPrefix("job-") } } ?? []
        }
    }

    // MARK: - Scenarios

    private func cancelTearsDownEscapedProcess(mode: String) throws {
        let fixture = try Fixture(mode: mode)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        let id = try fixture.daemon.orchctl(["submit", "--shell", fixture.escapingScript(marker: marker.path)]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        #expect(getpgid(escaped) == escaped, "it left the job's process group")
        #expect(fixture.mode != "cgroup" || fixture.jobCgroups == ["job-\(id)-1"], "one cgroup per attempt: \(fixture.jobCgroups)")
        #expect(try fixture.daemon.orchctl(["cancel", id]).status == 0)
        let waited = try fixture.daemon.orchctl(["wait", id])
        #expect(waited.standardOutput.contains("cancelled"), "\(waited)")
        #expect(fixture.isGone(escaped), "the setsid'ed process was torn down with its job")
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
        #expect(fixture.jobCgroups.isEmpty, "the job's cgroup was removed: \(fixture.jobCgroups)")
    }

    private func timeoutTearsDownEscapedProcess(mode: String) throws {
        let fixture = try Fixture(mode: mode)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        let id = try fixture.daemon.orchctl(["submit", "--timeout", "1s", "--shell", fixture.escapingScript(marker: marker.path)]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        let waited = try fixture.daemon.orchctl(["wait", id])
        #expect(waited.standardOutput.contains("timed_out"), "\(waited)")
        #expect(fixture.isGone(escaped), "the setsid'ed process was torn down at the timeout")
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
    }

    private func stopTearsDownEscapedProcess(mode: String) throws {
        let fixture = try Fixture(mode: mode)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        _ = try fixture.daemon.orchctl(["submit", "--shell", fixture.escapingScript(marker: marker.path)]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        #expect(fixture.daemon.stop() == 0)
        #expect(fixture.isGone(escaped), "the setsid'ed process was torn down before orchd exited")
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
        if let cgroup = fixture.cgroup {
            #expect(!Cgroup(path: cgroup).exists, "orchd removed its cgroup subtree at a clean exit")
        }
    }

    private func stopTearsDownProcessWithoutIdentity(mode: String) throws {
        let fixture = try Fixture(mode: mode, arguments: ["--drain-timeout", "1s", "--kill-grace", "3s"])
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        // A new session and an empty environment: no ORCHD_JOB_ID for a teardown to find, as
        // after a daemon that retitles itself overwrote it.
        let script = "setsid env -i /bin/sh -c 'echo $$ > \(marker.path); exec sleep 900' & sleep 900"
        _ = try fixture.daemon.orchctl(["submit", "--shell", script]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        #expect(fixture.daemon.stop() == 0)
        #expect(fixture.isGone(escaped), "orchd tore down its last descendant before it exited")
        if mode == "process-group" {
            #expect(fixture.daemon.daemonLog.contains("outlived their job's teardown (pid \(escaped))"), "\(fixture.daemon.daemonLog)")
            // The stop's own extensions grant 9 s (drain, grace and 5 s); this one, the
            // leftovers' teardown: the grace and 5 s.
            #expect(fixture.daemon.notify.waitFor("EXTEND_TIMEOUT_USEC=8000000", timeout: 1) != nil, "systemd is told the stop goes on")
        }
    }

    private func durabilityLossKillsEveryJob(mode: String) throws {
        let shim = try FailingSyncShim()
        let fixture = try Fixture(mode: mode, environment: shim.environment)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        _ = try fixture.daemon.orchctl(["submit", "--shell", fixture.escapingScript(marker: marker.path)]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        try shim.failFromNow()
        // Its barrier fails: orchd exits at once, with no stop, and kills what it runs first.
        let refused = try fixture.daemon.orchctl(["submit", "--", "true"])
        #expect(refused.status == 69, "\(refused)")
        let process = try #require(fixture.daemon.process)
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == Scheduler.durabilityLostExitStatus, "\(fixture.daemon.daemonLog)")
        #expect(fixture.daemon.daemonLog.contains("with every job killed"), "\(fixture.daemon.daemonLog)")
        #expect(fixture.becomesGone(escaped), "the setsid'ed process of the running job did not outlive orchd")
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
        try shim.stopFailing()
    }

    private func recoveryWithoutTheDatabaseKillsLeftovers(mode: String) throws {
        let fixture = try Fixture(mode: mode)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        _ = try fixture.daemon.orchctl(["submit", "--shell", fixture.escapingScript(marker: marker.path)]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        fixture.daemon.crash()
        for file in ["orchd.db", "orchd.db-wal", "orchd.db-shm"] { unlink(fixture.daemon.stateDirectory + "/" + file) }
        try fixture.daemon.start()
        #expect(fixture.isGone(escaped), "the new database records no job, yet the previous daemon's job did not outlive it")
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
    }

    private func leftoverAfterExitIsTornDown(mode: String) throws {
        // An hour's grace: the job ends within the test's time only if the leftover's own
        // exit on SIGTERM ends the grace, in either containment.
        let fixture = try Fixture(mode: mode, arguments: ["--kill-grace", "1h"])
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        try #require(mkfifo(marker.path + ".go", 0o600) == 0)
        let script = fixture.escapingScript(marker: marker.path, then: "read x < '\(marker.path).go'; exit 3")
        let id = try fixture.daemon.orchctl(["submit", "--shell", script]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        let gate = try openForWriting(fifo: marker.path + ".go")
        _ = write(gate, "x\n", 2)
        close(gate)
        let waited = try fixture.daemon.orchctl(["wait", id])
        #expect(waited.status == 3, "the result is the main process's exit code: \(waited)")
        #expect(fixture.isGone(escaped), "the leftover was torn down before the job ended")
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
        #expect(fixture.jobCgroups.isEmpty, "\(fixture.jobCgroups)")
    }

    private func cancelWithSignalHastensLeftovers(mode: String) throws {
        // An hour's grace, and a leftover that ignores SIGTERM: only the cancel's SIGKILL ends
        // the job within the test's time.
        let fixture = try Fixture(mode: mode, arguments: ["--kill-grace", "1h"])
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        let trapped = fixture.daemon.directory + "/trapped"
        // The main process says which it is and exits once the leftover ignores SIGTERM.
        let script = "setsid sh -c 'trap \"\" TERM; echo $$ > \(trapped); exec sleep 900' & "
            + "while [ ! -s \(trapped) ]; do sleep 0.01; done; echo \"$(cat \(trapped)) $$\" > \(marker.path); exit 3"
        let id = try fixture.daemon.orchctl(["submit", "--shell", script]).line
        let pids = try #require(marker.read()).split(separator: " ").compactMap { Int32($0) }
        try #require(pids.count == 2)
        let (escaped, main) = (pids[0], pids[1])
        // Once orchd has reaped the main process (its /proc entry goes only then), the
        // leftover is being torn down, ignoring the SIGTERM, for an hour.
        let reapedBy = Date().addingTimeInterval(30)
        while access("/proc/\(main)", F_OK) == 0, Date() < reapedBy { usleep(10_000) }
        let cancelled = try fixture.daemon.orchctl(["cancel", "--signal", "KILL", id])
        #expect(cancelled.status == 0, "\(cancelled)")
        #expect(cancelled.line == "\(id) ended before it was cancelled: failed(3)" || cancelled.line == "cancelled \(id)", "\(cancelled)")
        let waited = try fixture.daemon.orchctl(["wait", id])
        #expect(fixture.isGone(escaped), "the cancel's SIGKILL reached the leftover")
        if cancelled.line.hasPrefix("\(id) ended") {
            #expect(waited.status == 3, "the result stays the main process's: \(waited)")
        }
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
    }

    /// Waits until orchd has stored the result job `id` will end with (`jobs.ending`), read
    /// from the database the way an admin's `sqlite3` would, beside the running orchd.
    /// - Parameter expected: wait for this text; `nil`: for any.
    private func waitForStoredEnding(_ fixture: Fixture, _ id: String, _ expected: String? = nil) throws -> String? {
        let database = try Database(path: fixture.daemon.stateDirectory + "/orchd.db")
        let deadline = Date().addingTimeInterval(30)
        var ending: String?
        while Date() < deadline {
            ending = try database.read { db -> String? in
                let statement = try db.makeStatement("SELECT ending FROM jobs WHERE id = \(Int(id) ?? 0)")
                return try statement.step() ? statement.string(at: 0) : nil
            }
            if let ending, expected == nil || ending == expected { return ending }
            usleep(10_000)
        }
        return ending
    }

    /// A cancel that comes while the processes a failed main process left are torn down keeps
    /// the attempt's own result and ends the job: no retry follows, nor after a kill -9 of
    /// orchd in that teardown.
    private func cancelEndsRetries(mode: String, crash: Bool) throws {
        let fixture = try Fixture(mode: mode, arguments: ["--kill-grace", "1h"])
        let directory = fixture.daemon.directory
        let marker = try ReadyMarker(path: directory + "/exited")
        let trapped = directory + "/trapped"
        let script = "echo run >> \(directory)/runs; setsid sh -c 'trap \"\" TERM; echo $$ > \(trapped); exec sleep 900' & "
            + "while [ ! -s \(trapped) ]; do sleep 0.01; done; echo $$ > \(marker.path); exit 3"
        let id = try fixture.daemon.orchctl(["submit", "--retries", "2", "--shell", script]).line
        let main = try #require(marker.read().flatMap { Int32($0) })
        // orchd reaped the main process and keeps its result while the leftover ignores SIGTERM.
        #expect(try waitForStoredEnding(fixture, id) == "failed:3")
        #expect(access("/proc/\(main)", F_OK) != 0)
        // Without --signal KILL the cancel waits out the hour's grace: the crash comes first.
        let cancel = try OrchctlStream(fixture.daemon, crash ? ["cancel", id] : ["cancel", "--signal", "KILL", id])
        defer { cancel.stop() }
        if crash {
            #expect(try waitForStoredEnding(fixture, id, "failed:3;final") == "failed:3;final")
            fixture.daemon.crash()
            try fixture.daemon.start()
        } else {
            #expect(cancel.rest(timeout: 60) == "\(id) ended before it was cancelled: failed(3)\n")
        }
        // A job run again would sleep for 15 minutes: the wait times out (124) instead.
        let waited = try fixture.daemon.orchctl(["wait", "--timeout", "60s", id])
        #expect(waited.line == "\(id) failed(3)" && waited.status == 3, "\(waited)\n\(fixture.daemon.daemonLog)")
        #expect(try String(contentsOfFile: directory + "/runs", encoding: .utf8) == "run\n", "the job ran once")
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
        if crash {
            #expect(fixture.daemon.daemonLog.contains("job \(id) was ending as failed when the previous daemon stopped; recorded as failed"))
        }
    }

    /// A job's result known before its processes are gone survives a kill -9 of orchd: the
    /// restarted orchd records it, and does not run the job again although it has retries.
    private func knownResultSurvivesCrash(mode: String, cancelled: Bool) throws {
        let fixture = try Fixture(mode: mode, arguments: ["--kill-grace", "1h"])
        let directory = fixture.daemon.directory
        let marker = try ReadyMarker(path: directory + "/started")
        let trapped = directory + "/trapped"
        // Each run is counted; a process that ignores SIGTERM keeps the teardown in its grace.
        let script = cancelled
            ? "echo run >> \(directory)/runs; trap '' TERM; echo $$ > \(marker.path); sleep 900"
            : "echo run >> \(directory)/runs; setsid sh -c 'trap \"\" TERM; echo $$ > \(trapped); exec sleep 900' & "
                + "while [ ! -s \(trapped) ]; do sleep 0.01; done; echo $$ > \(marker.path); exit 0"
        let id = try fixture.daemon.orchctl(["submit", "--retries", "2", "--shell", script]).line
        try #require(marker.read() != nil)
        var cancel: OrchctlStream?
        defer { cancel?.stop() }
        if cancelled { cancel = try OrchctlStream(fixture.daemon, ["cancel", id], captureErrors: true) }
        let ending = try waitForStoredEnding(fixture, id)
        #expect(ending == (cancelled ? "cancelled;final" : "succeeded"), "stored before the processes are gone")
        fixture.daemon.crash()
        try fixture.daemon.start()
        // A job run again would sleep for 15 minutes: the wait times out (124) instead.
        let waited = try fixture.daemon.orchctl(["wait", "--timeout", "60s", id])
        #expect(waited.line == "\(id) \(cancelled ? "cancelled" : "succeeded")", "\(waited)\n\(fixture.daemon.daemonLog)")
        #expect(waited.status == (cancelled ? 1 : 0))
        #expect(try String(contentsOfFile: directory + "/runs", encoding: .utf8) == "run\n", "the job ran once")
        #expect(fixture.leftovers.isEmpty, "recovery tore down what the job left: \(fixture.leftovers)")
        #expect(fixture.daemon.daemonLog.contains("job \(id) was ending as \(cancelled ? "cancelled" : "succeeded") when the previous daemon stopped"))
    }

    /// How ``crashRecoveryNeverRunsTwoCopies(mode:restart:)`` starts orchd again after its
    /// `kill -9`.
    enum Restart {
        /// As the first time.
        case asBefore
        /// Naming the state directory another way (a symbolic link to its parent and a
        /// trailing slash), as an admin's script may.
        case respelled
        /// Naming it by a bind mount of it (in a mount namespace of orchd's own), which no
        /// resolving of the name unifies.
        case throughABindMount
        /// From another cgroup, as from another login session: outside systemd the job
        /// cgroups' subtree sits under the cgroup orchd was started in.
        case fromAnotherCgroup
    }

    /// A job whose attempt starts a process in a new session is retried after a `kill -9` of
    /// orchd and a restart as `restart` says: the restarted orchd kills the first attempt's
    /// process before the retry starts. Where the restart could not find it by its own name
    /// (its cgroup, or its `ORCHD_STATE_DIR`), the process clears its environment under cgroup
    /// containment, so that only the first daemon's job cgroup can be found.
    private func crashRecoveryNeverRunsTwoCopies(mode: String, restart: Restart = .asBefore) throws {
        let fixture = try Fixture(mode: mode)
        let directory = fixture.daemon.directory
        let first = try ReadyMarker(path: directory + "/first")
        let second = try ReadyMarker(path: directory + "/second")
        let escape = mode == "cgroup" && [.throughABindMount, .fromAnotherCgroup].contains(restart) ? "setsid env -i /bin/sh" : "setsid sh"
        // Each attempt first records any earlier escaped process still alive (not a zombie:
        // field 3 of /proc/PID/stat), then starts its own.
        let script = """
            for p in $(cat '\(directory)/pids' 2>/dev/null); do \
            s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); \
            [ -n "$s" ] && [ "$s" != Z ] && echo "$p $s" >> '\(directory)/overlap'; done; \
            if [ -e '\(directory)/ran' ]; then m='\(second.path)'; else m='\(first.path)'; touch '\(directory)/ran'; fi; \
            \(escape) -c "echo \\$\\$ >> '\(directory)/pids'; echo \\$\\$ > $m; exec sleep 900" & sleep 900
            """
        try #require(fixture.daemon.orchctl(["queue", "set", "default", "--retry-base", "10ms", "--retry-cap", "50ms"]).status == 0)
        let id = try fixture.daemon.orchctl(["submit", "--retries", "1", "--shell", script]).line
        let firstEscaped = try #require(first.read().flatMap { Int32($0) })
        fixture.daemon.crash()
        #expect(!fixture.isGone(firstEscaped), "kill -9 of orchd leaves the job's processes running")
        var elsewhere: Cgroup?
        defer {
            // The daemon and what its jobs left go first, then the cgroup it was started in
            // (Cgroup.remove takes the emptied subtree below it too).
            if let elsewhere {
                fixture.daemon.crash()
                CgroupSupport.cleanUp(stateDirectory: fixture.daemon.stateDirectory, cgroup: fixture.cgroup)
                let escaped = (try? String(contentsOfFile: directory + "/pids", encoding: .utf8)) ?? ""
                for pid in escaped.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
                for group in elsewhere.children().map(elsewhere.child) {
                    for job in group.children().map(group.child) { job.kill(); job.waitUntilEmpty(timeout: .seconds(10)) }
                }
                elsewhere.remove()
            }
        }
        switch restart {
        case .asBefore:
            try fixture.daemon.start()
        case .respelled:
            try #require(symlink(directory, directory + "/link") == 0)
            try fixture.daemon.start(extraArguments: ["--state-dir", directory + "/link/state/"])
            let info = try fixture.daemon.orchctl(["info"]).standardOutput
            #expect(info.contains(fixture.daemon.stateDirectory + "\n"), "the state directory is shown resolved: \(info)")
        case .throughABindMount:
            let alias = directory + "/alias"
            try #require(mkdir(alias, 0o700) == 0)
            try fixture.daemon.start(
                extraArguments: ["--state-dir", alias],
                launcher: ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                           "mount --bind '\(fixture.daemon.stateDirectory)' '\(alias)' && exec \"$0\" \"$@\""])
            #expect(try fixture.daemon.orchctl(["info"]).standardOutput.contains(alias + "\n"), "the bind mount is a name of its own")
        case .fromAnotherCgroup:
            let subtree = Cgroup(path: try #require(fixture.cgroup))
            let cgroup = Cgroup(path: String(subtree.path.dropLast(subtree.name.count + 1)) + "/e2e-session-\(UInt32.random(in: 0...UInt32.max))")
            try #require(cgroup.create() == 0)
            elsewhere = cgroup
            try fixture.daemon.start(launcher: ["/bin/sh", "-c", "echo $$ > '\(cgroup.path)/cgroup.procs' && exec \"$0\" \"$@\""])
            try fixture.readInfo()
            #expect(fixture.cgroup?.hasPrefix(cgroup.path + "/") == true, "the restarted orchd has a subtree of its own: \(fixture.cgroup ?? "none")")
            #expect(!subtree.exists, "the first daemon's subtree was removed")
        }
        let secondEscaped = try #require(second.read().flatMap { Int32($0) }, "the job was retried")
        #expect(fixture.isGone(firstEscaped), "recovery killed the first attempt's escaped process")
        #expect(!FileManager.default.fileExists(atPath: directory + "/overlap"),
            "two copies ran at once: \((try? String(contentsOfFile: directory + "/overlap", encoding: .utf8)) ?? "")")
        try fixture.readInfo()
        #expect(fixture.mode != "cgroup" || fixture.jobCgroups == ["job-\(id)-2"], "\(fixture.jobCgroups)")
        #expect(try fixture.daemon.orchctl(["cancel", id]).status == 0)
        _ = try fixture.daemon.orchctl(["wait", id])
        #expect(fixture.isGone(secondEscaped))
        #expect(fixture.leftovers.isEmpty, "no job process is left: \(fixture.leftovers)")
    }

    // MARK: - Hook scenarios

    /// A hook that starts a setsid'ed child and exits: the child is torn down at the hook's end.
    private func hookLeftoverIsTornDown(mode: String) throws {
        let fixture = try Fixture(mode: mode)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        // The hook exits only once the child has written its pid (a gate, a named pipe).
        try #require(mkfifo(marker.path + ".go", 0o600) == 0)
        let hook = fixture.escapingScript(marker: marker.path, then: "read x < '\(marker.path).go'; echo hi")
        try #require(fixture.daemon.orchctl(["queue", "set", "default", "--on", "started=\(hook)"]).status == 0)
        let id = try fixture.daemon.orchctl(["submit", "--", "true"]).line
        _ = try fixture.daemon.orchctl(["wait", id])
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        let gate = try openForWriting(fifo: marker.path + ".go")
        _ = write(gate, "x\n", 2)
        close(gate)
        // An event-driven wait (pidfd) for the teardown the hook's exit starts.
        #expect(ProcessGroup(id: escaped).waitUntilGone(timeout: .seconds(30)), "the hook's setsid'ed child was torn down at its end")
        #expect(fixture.leftovers.isEmpty, "no job or hook process is left: \(fixture.leftovers)")
    }

    /// A running hook (a child in its process group and a setsid'ed one) is torn down when
    /// orchd stops, before it exits.
    private func stopTearsDownRunningHook(mode: String) throws {
        let fixture = try Fixture(mode: mode)
        let escapedMarker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        let childMarker = try ReadyMarker(path: fixture.daemon.directory + "/child")
        let hook = fixture.escapingScript(marker: escapedMarker.path, then: "sh -c 'echo $$ > \(childMarker.path); exec sleep 950'")
        try #require(fixture.daemon.orchctl(["queue", "set", "default", "--on", "started=\(hook)"]).status == 0)
        let id = try fixture.daemon.orchctl(["submit", "--", "true"]).line
        _ = try fixture.daemon.orchctl(["wait", id])
        let escaped = try #require(escapedMarker.read().flatMap { Int32($0) })
        let child = try #require(childMarker.read().flatMap { Int32($0) })
        #expect(fixture.mode != "cgroup" || fixture.hookCgroups.count == 1, "the hook runs in a cgroup of its own: \(fixture.hookCgroups)")
        #expect(fixture.daemon.stop() == 0)
        #expect(fixture.isGone(escaped), "the hook's setsid'ed child was torn down before orchd exited")
        #expect(fixture.isGone(child), "the hook's child was torn down before orchd exited")
        #expect(fixture.leftovers.isEmpty, "no job or hook process is left: \(fixture.leftovers)")
        if let cgroup = fixture.cgroup {
            #expect(!Cgroup(path: cgroup).exists, "orchd removed its cgroup subtree at a clean exit")
        }
    }

    /// A hook left running by a killed orchd is killed by the next one's recovery.
    private func recoveryKillsLeftoverHook(mode: String) throws {
        let fixture = try Fixture(mode: mode)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        let hook = fixture.escapingScript(marker: marker.path, then: "sleep 950")
        try #require(fixture.daemon.orchctl(["queue", "set", "default", "--on", "started=\(hook)"]).status == 0)
        let id = try fixture.daemon.orchctl(["submit", "--", "true"]).line
        _ = try fixture.daemon.orchctl(["wait", id])
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        fixture.daemon.crash()
        #expect(!fixture.isGone(escaped), "kill -9 of orchd leaves the hook's processes running")
        try fixture.daemon.start()
        #expect(fixture.isGone(escaped), "recovery killed the hook's setsid'ed child")
        #expect(fixture.leftovers.isEmpty, "no job or hook process is left: \(fixture.leftovers)")
        #expect(fixture.hookCgroups.isEmpty, "recovery removed the hook's cgroup: \(fixture.hookCgroups)")
    }

    // MARK: - cgroup

    @Test("cgroup: a hook's setsid'ed child is torn down when the hook exits",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupHookLeftover() throws { try hookLeftoverIsTornDown(mode: "cgroup") }

    @Test("cgroup: stopping orchd (SIGTERM) tears down a running hook and its setsid'ed child",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupHookStop() throws { try stopTearsDownRunningHook(mode: "cgroup") }

    @Test("cgroup: after kill -9, the restarted orchd kills the hook cgroups left running",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupHookRecovery() throws { try recoveryKillsLeftoverHook(mode: "cgroup") }

    @Test("cgroup: cancel tears down a process that escaped the job's process group with setsid",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupCancel() throws { try cancelTearsDownEscapedProcess(mode: "cgroup") }

    @Test("cgroup: --timeout tears down a setsid'ed process", .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupTimeout() throws { try timeoutTearsDownEscapedProcess(mode: "cgroup") }

    @Test("cgroup: stopping orchd (SIGTERM) tears down a setsid'ed process and removes orchd's cgroup",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupStop() throws { try stopTearsDownEscapedProcess(mode: "cgroup") }

    @Test("cgroup: after kill -9 and a restart with --retries, the retry never runs beside the first attempt's escaped process",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupCrashRecovery() throws { try crashRecoveryNeverRunsTwoCopies(mode: "cgroup") }

    @Test("cgroup: after kill -9, a restart that names the state directory another way (a symbolic link, a trailing slash) still kills the escaped process before the retry",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupCrashRecoveryRespelled() throws { try crashRecoveryNeverRunsTwoCopies(mode: "cgroup", restart: .respelled) }

    @Test("cgroup: after kill -9, an orchd restarted through a bind mount of the state directory kills what the first one's job cgroup holds before the retry",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupCrashRecoveryThroughABindMount() throws { try crashRecoveryNeverRunsTwoCopies(mode: "cgroup", restart: .throughABindMount) }

    @Test("cgroup: after kill -9, an orchd restarted from another cgroup kills what the first one's job cgroup holds before the retry, and removes that subtree",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupCrashRecoveryFromAnotherCgroup() throws { try crashRecoveryNeverRunsTwoCopies(mode: "cgroup", restart: .fromAnotherCgroup) }

    @Test("cgroup: an orchd started on a copy of a running orchd's state directory leaves that orchd's running job alone, saying why",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func copyOfALiveStateDirectory() throws {
        let fixture = try Fixture(mode: "cgroup")
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/pid")
        let id = try fixture.daemon.orchctl(["submit", "--shell", "echo $$ > '\(marker.path)'; exec sleep 900"]).line
        let pid = try #require(marker.read().flatMap { Int32($0) })
        let copy = try TestDaemon(arguments: ["--containment", "cgroup"])
        copy.crash()
        try FileManager.default.removeItem(atPath: copy.stateDirectory)
        let copied = try TestDaemon.run("/bin/cp", ["-a", fixture.daemon.stateDirectory, copy.stateDirectory])
        try #require(copied.status == 0, "\(copied)")
        try copy.start()
        #expect(copy.daemonLog.contains("job \(id) is recorded running as pid \(pid), which belongs to another state directory's orchd"), "\(copy.daemonLog)")
        #expect(!fixture.isGone(pid), "the original's job runs on")
        #expect(try fixture.daemon.orchctl(["show", id, "--json"]).standardOutput.contains("\"state\" : \"running\""))
        #expect(copy.stop() == 0)
        #expect(try fixture.daemon.orchctl(["cancel", id]).status == 0)
    }

    @Test("cgroup: a main process that exits leaving a setsid'ed child ends with its own result, the child torn down",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupLeftoverAfterExit() throws { try leftoverAfterExitIsTornDown(mode: "cgroup") }

    @Test("cgroup: cancel --signal KILL while a job's leftovers are torn down kills them at once; the job keeps its own result and cancel says so",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupCancelHastensLeftovers() throws { try cancelWithSignalHastensLeftovers(mode: "cgroup") }

    @Test("cgroup: wait --queue Q --drained does not return while an escaped process ignoring SIGTERM lives",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupDrainedWaitsForEscaped() throws {
        let fixture = try Fixture(mode: "cgroup")
        try drainedWaitsForLeftover(fixture, spawn: "setsid sh -c")
    }

    @Test("cgroup: a job forking in a loop is killed entirely by cgroup.kill",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupForkLoop() throws {
        let fixture = try Fixture(mode: "cgroup")
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/forking")
        // Escaped, ignoring SIGTERM, and forking up to 2000 sleepers (also ignoring SIGTERM):
        // only cgroup.kill, which catches forks in flight, ends it.
        let script = "setsid sh -c 'trap \"\" TERM; echo $$ > \(marker.path); i=0; while [ $i -lt 2000 ]; do sleep 300 & i=$((i+1)); done; wait' & sleep 900"
        let id = try fixture.daemon.orchctl(["submit", "--shell", script]).line
        _ = try #require(marker.read())
        #expect(try fixture.daemon.orchctl(["cancel", id]).status == 0)
        let waited = try fixture.daemon.orchctl(["wait", id])
        #expect(waited.standardOutput.contains("cancelled"), "\(waited)")
        #expect(fixture.leftovers.isEmpty, "every forked process is gone: \(fixture.leftovers.count) left")
        #expect(fixture.jobCgroups.isEmpty, "\(fixture.jobCgroups)")
    }

    // MARK: - process-group fallback

    @Test("process-group: a hook's setsid'ed child, found by its ORCHD_HOOK_ID, is torn down when the hook exits")
    func fallbackHookLeftover() throws { try hookLeftoverIsTornDown(mode: "process-group") }

    @Test("process-group: stopping orchd (SIGTERM) tears down a running hook and its setsid'ed child")
    func fallbackHookStop() throws { try stopTearsDownRunningHook(mode: "process-group") }

    @Test("process-group: after kill -9, the restarted orchd kills the hook processes left running")
    func fallbackHookRecovery() throws { try recoveryKillsLeftoverHook(mode: "process-group") }

    @Test("process-group: cancel tears down a setsid'ed process found by its ORCHD_JOB_ID")
    func fallbackCancel() throws { try cancelTearsDownEscapedProcess(mode: "process-group") }

    /// Starts a chain of ``Fixture/hopChainScript(marker:)`` as a job, ends it with `end`
    /// (given the job's ID), and checks that the job ended with `result` and that no link of
    /// the chain lives on; `rounds` times, since a hand-over missed is a matter of timing.
    private func hopChainIsStopped(
        _ fixture: Fixture, rounds: Int, result: String, mainThen: String = "sleep 900", by end: (String) throws -> Void
    ) throws {
        defer { fixture.stopHopChain() }
        for round in 1...rounds {
            let marker = try ReadyMarker(path: fixture.daemon.directory + "/hopping-\(round)")
            let id = try fixture.daemon.orchctl(["submit", "--shell", fixture.hopChainScript(marker: marker.path, then: mainThen)]).line
            _ = try #require(marker.read())
            try end(id)
            let waited = try fixture.daemon.orchctl(["wait", id])
            #expect(waited.standardOutput.contains(result), "\(waited)")
            // Every process is in /proc whatever its parent, so this scan misses no link.
            let left = fixture.leftovers
            #expect(left.isEmpty, "round \(round): the chain outlived its job: \(left)")
            guard left.isEmpty else { return }
        }
    }

    @Test("process-group: cancel tears down a chain of processes each starting the next in a new session and exiting, which ignore SIGTERM")
    func fallbackCancelHopChain() throws {
        let fixture = try Fixture(mode: "process-group", arguments: ["--kill-grace", "1s"])
        try hopChainIsStopped(fixture, rounds: 3, result: "cancelled") { id in
            let cancelled = try fixture.daemon.orchctl(["cancel", id])
            #expect(cancelled.status == 0, "\(cancelled)")
        }
    }

    @Test("process-group: a chain of processes each starting the next in a new session, left by a main process that exits, is torn down; the job keeps its result")
    func fallbackLeftoverHopChain() throws {
        let fixture = try Fixture(mode: "process-group", arguments: ["--kill-grace", "1s"])
        try hopChainIsStopped(fixture, rounds: 3, result: "succeeded", mainThen: "exit 0") { _ in }
    }

    @Test("process-group: after kill -9, the restarted orchd kills a chain of processes each starting the next in a new session")
    func fallbackRecoveryHopChain() throws {
        let fixture = try Fixture(mode: "process-group")
        try hopChainIsStopped(fixture, rounds: 2, result: "interrupted") { _ in
            fixture.daemon.crash()
            try fixture.daemon.start()
        }
    }

    @Test("process-group: --timeout tears down a setsid'ed process found by its ORCHD_JOB_ID")
    func fallbackTimeout() throws { try timeoutTearsDownEscapedProcess(mode: "process-group") }

    @Test("process-group: stopping orchd (SIGTERM) tears down a setsid'ed process")
    func fallbackStop() throws { try stopTearsDownEscapedProcess(mode: "process-group") }

    @Test("process-group: stopping orchd tears down, as its last descendant, a setsid'ed process that cleared its environment (no ORCHD_JOB_ID)")
    func fallbackStopWithoutIdentity() throws { try stopTearsDownProcessWithoutIdentity(mode: "process-group") }

    @Test("cgroup: stopping orchd tears down a setsid'ed process that cleared its environment",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupStopWithoutIdentity() throws { try stopTearsDownProcessWithoutIdentity(mode: "cgroup") }

    @Test("process-group: after kill -9 and the loss of the database, the restarted orchd kills the jobs the previous one left")
    func fallbackRecoveryWithoutDatabase() throws { try recoveryWithoutTheDatabaseKillsLeftovers(mode: "process-group") }

    @Test("cgroup: after kill -9 and the loss of the database, the restarted orchd kills the jobs the previous one left",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupRecoveryWithoutDatabase() throws { try recoveryWithoutTheDatabaseKillsLeftovers(mode: "cgroup") }

    @Test("cgroup, then process-group: after kill -9, an orchd restarted without cgroups kills what the job cgroups still hold and removes the subtree",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func containmentSwitchRemovesSubtree() throws {
        let fixture = try Fixture(mode: "cgroup")
        let subtree = try #require(fixture.cgroup)
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/escaped")
        let id = try fixture.daemon.orchctl(["submit", "--shell", fixture.escapingScript(marker: marker.path)]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        #expect(fixture.jobCgroups == ["job-\(id)-1"])
        fixture.daemon.crash()
        try fixture.daemon.start(extraArguments: ["--containment", "process-group"])
        #expect(fixture.isGone(escaped), "the job's setsid'ed process did not outlive the change of containment")
        #expect(!Cgroup(path: subtree).exists, "the subtree and its job cgroup were removed")
        #expect(fixture.daemon.daemonLog.contains("containment: removed \(subtree)"), "\(fixture.daemon.daemonLog)")
        #expect(try fixture.daemon.orchctl(["show", id]).standardOutput.contains("interrupted"))
    }

    @Test("process-group: an fdatasync that fails ends orchd (74) with its running jobs killed, a setsid'ed process too")
    func fallbackDurabilityLoss() throws { try durabilityLossKillsEveryJob(mode: "process-group") }

    @Test("cgroup: an fdatasync that fails ends orchd (74) with its running jobs killed, a setsid'ed process too",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupDurabilityLoss() throws { try durabilityLossKillsEveryJob(mode: "cgroup") }

    @Test("cgroup: a job whose main process succeeded while what it left was torn down is recorded succeeded after kill -9 of orchd, not run again",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupResultSurvivesCrash() throws { try knownResultSurvivesCrash(mode: "cgroup", cancelled: false) }

    @Test("cgroup: a job being cancelled when orchd is killed with kill -9 ends cancelled at the restart, not run again",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func cgroupCancelSurvivesCrash() throws { try knownResultSurvivesCrash(mode: "cgroup", cancelled: true) }

    @Test("process-group: a job whose main process succeeded while what it left was torn down is recorded succeeded after kill -9 of orchd, not run again")
    func fallbackResultSurvivesCrash() throws { try knownResultSurvivesCrash(mode: "process-group", cancelled: false) }

    @Test("process-group: a job being cancelled when orchd is killed with kill -9 ends cancelled at the restart, not run again")
    func fallbackCancelSurvivesCrash() throws { try knownResultSurvivesCrash(mode: "process-group", cancelled: true) }

    @Test("cgroup: a cancel while a failed attempt's leftovers are torn down keeps its result and retries nothing, also across kill -9 of orchd",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)), arguments: [false, true])
    func cgroupCancelEndsRetries(crash: Bool) throws { try cancelEndsRetries(mode: "cgroup", crash: crash) }

    @Test("process-group: a cancel while a failed attempt's leftovers are torn down keeps its result and retries nothing, also across kill -9 of orchd",
        arguments: [false, true])
    func fallbackCancelEndsRetries(crash: Bool) throws { try cancelEndsRetries(mode: "process-group", crash: crash) }

    @Test("process-group: after kill -9 and a restart with --retries, the retry never runs beside the first attempt's escaped process")
    func fallbackCrashRecovery() throws { try crashRecoveryNeverRunsTwoCopies(mode: "process-group") }

    @Test("process-group: after kill -9, a restart that names the state directory another way (a symbolic link, a trailing slash) still kills the escaped process before the retry")
    func fallbackCrashRecoveryRespelled() throws { try crashRecoveryNeverRunsTwoCopies(mode: "process-group", restart: .respelled) }

    @Test("process-group: after kill -9, an orchd restarted through a bind mount of the state directory finds the escaped process by what its ORCHD_STATE_DIR names")
    func fallbackCrashRecoveryThroughABindMount() throws { try crashRecoveryNeverRunsTwoCopies(mode: "process-group", restart: .throughABindMount) }

    @Test("process-group: a main process that exits leaving a setsid'ed child ends with its own result, the child torn down")
    func fallbackLeftoverAfterExit() throws { try leftoverAfterExitIsTornDown(mode: "process-group") }

    @Test("process-group: cancel --signal KILL while a job's leftovers are torn down kills them at once; the job keeps its own result and cancel says so")
    func fallbackCancelHastensLeftovers() throws { try cancelWithSignalHastensLeftovers(mode: "process-group") }

    @Test("process-group: wait --queue Q --drained does not return while a leftover of the process group lives")
    func fallbackDrainedWaitsForLeftover() throws {
        let fixture = try Fixture(mode: "process-group")
        try drainedWaitsForLeftover(fixture, spawn: "sh -c")
    }

    @Test("process-group: wait --queue Q --drained does not return while a setsid'ed process ignoring SIGTERM lives")
    func fallbackDrainedWaitsForEscaped() throws {
        let fixture = try Fixture(mode: "process-group")
        try drainedWaitsForLeftover(fixture, spawn: "setsid sh -c")
    }

    /// A job whose main process exits while a child that ignores SIGTERM lives on (started
    /// with `spawn`): `wait --queue q --drained` returns only after the child is gone (killed
    /// after the grace), and the job's result is the main process's.
    private func drainedWaitsForLeftover(_ fixture: Fixture, spawn: String) throws {
        let marker = try ReadyMarker(path: fixture.daemon.directory + "/child")
        let gate = fixture.daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let script = "\(spawn) 'trap \"\" TERM; echo $$ > \(marker.path); exec sleep 900' & read x < '\(gate)'"
        try #require(fixture.daemon.orchctl(["queue", "add", "q"]).status == 0)
        let id = try fixture.daemon.orchctl(["submit", "--queue", "q", "--shell", script]).line
        let child = try #require(marker.read().flatMap { Int32($0) })
        let waiter = Process()
        waiter.executableURL = URL(fileURLWithPath: Binaries.orchctl)
        waiter.arguments = ["--socket", fixture.daemon.socketPath, "wait", "--queue", "q", "--drained"]
        waiter.standardOutput = FileHandle.nullDevice
        try waiter.run()
        let gateFD = try openForWriting(fifo: gate)
        _ = write(gateFD, "x\n", 2)
        close(gateFD)
        #expect(waiter.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "wait --drained did not return")
        #expect(waiter.terminationStatus == 0)
        #expect(fixture.isGone(child), "the queue was drained only once the leftover was gone")
        let waited = try fixture.daemon.orchctl(["wait", id])
        #expect(waited.status == 0, "the result is the main process's: \(waited)")
    }
}

/// orchd where the cgroup2 mount is read-only: the fallback, saying why.
@Suite("Containment without a writable cgroup end to end")
struct ReadOnlyCgroupTests {
    @Test("auto falls back to process-group, says why, and still tears down a setsid'ed process at cancel",
        .enabled(if: ReadOnlyCgroup.unavailableReason == nil, Comment(rawValue: "needs unshare --mount as root: \(ReadOnlyCgroup.unavailableReason ?? "")")))
    func autoFallsBack() throws {
        let daemon = try TestDaemon(launcher: ReadOnlyCgroup.launcher)
        let info = try daemon.orchctl(["info", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        #expect(object?["containment"] as? String == "process-group", "\(info)")
        #expect(object?["cgroup"] == nil || object?["cgroup"] is NSNull, "\(info)")
        #expect(daemon.daemonLog.contains("warning: containment: process-group (cannot create cgroup "), "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("Read-only file system"), "\(daemon.daemonLog)")

        let marker = try ReadyMarker(path: daemon.directory + "/escaped")
        let id = try daemon.orchctl(["submit", "--shell", "setsid sh -c 'echo $$ > \(marker.path); exec sleep 900' & sleep 900"]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
        _ = try daemon.orchctl(["wait", id])
        #expect(ProcessGroup(id: escaped).isGone, "the fallback found it by its ORCHD_JOB_ID")
        #expect(CgroupSupport.liveJobProcesses(stateDirectory: daemon.stateDirectory).isEmpty)
    }

    @Test("--containment cgroup refuses to start without a writable cgroup, saying why",
        .enabled(if: ReadOnlyCgroup.unavailableReason == nil, Comment(rawValue: "needs unshare --mount as root: \(ReadOnlyCgroup.unavailableReason ?? "")")))
    func cgroupRequired() throws {
        let directory = NSTemporaryDirectory() + "/orchd-ro-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let launcher = ReadOnlyCgroup.launcher
        let result = try TestDaemon.run(launcher[0], Array(launcher.dropFirst()) + [
            Binaries.orchd, "--state-dir", directory + "/state", "--socket", directory + "/s", "--config", "/dev/null",
            "--containment", "cgroup",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("--containment cgroup: cannot create cgroup "), "\(result)")
        #expect(result.standardError.contains("Read-only file system"), "\(result)")
    }
}

/// orchd as a systemd service would run it: in `<name>.service`, delegated or not.
@Suite("Containment under a (simulated) systemd service end to end")
struct ServiceCgroupTests {
    /// A cgroup named like a systemd service beside the test's own, optionally marked
    /// delegated as systemd does for `Delegate=yes` (the `trusted.delegate` attribute).
    final class ServiceGroup {
        let group: Cgroup

        init(delegated: Bool) throws {
            try CgroupSupport.requireAvailable()
            let probe = try #require(Containment.subtreePath(stateDirectory: "/"))
            let slash = try #require(probe.lastIndex(of: "/"))
            let parent = String(probe[..<slash])
            group = Cgroup(path: parent + "/orchd-e2e-\(UUID().uuidString.prefix(8)).service")
            guard group.create() == 0 else { throw TestFailure("cannot create \(group.path)") }
            if delegated {
                guard cposix_setxattr(group.path, "trusted.delegate", "1", 1) == 0 else {
                    throw TestFailure("cannot mark \(group.path) delegated: \(errno)")
                }
            }
        }

        deinit {
            for name in group.children() {
                let child = group.child(name)
                child.kill()
                child.waitUntilEmpty(timeout: .seconds(10))
                child.remove()
            }
            group.kill()
            group.waitUntilEmpty(timeout: .seconds(10))
            group.remove()
        }

        /// A ``TestDaemon`` launcher that moves the shell into the group, then execs orchd.
        var launcher: [String] {
            ["/bin/sh", "-c", "echo $$ > '\(group.path)/cgroup.procs' && exec \"$0\" \"$@\""]
        }
    }

    @Test("with Delegate=yes, orchd moves itself into <service>/daemon and runs job cgroups beside it",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func delegated() throws {
        let service = try ServiceGroup(delegated: true)
        let daemon = try TestDaemon(launcher: service.launcher)
        defer { daemon.crash() }
        let info = try daemon.orchctl(["info", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        #expect(object?["containment"] as? String == "cgroup", "\(info)")
        #expect(object?["cgroup"] as? String == service.group.path, "\(info)")
        let pid = try #require(daemon.process?.processIdentifier)
        let own = (try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)) ?? ""
        #expect(own.contains("0::/") && own.hasSuffix("/\(service.group.name)/daemon\n"), "orchd is in the daemon leaf: \(own)")

        let marker = try ReadyMarker(path: daemon.directory + "/escaped")
        let id = try daemon.orchctl(["submit", "--shell", "setsid sh -c 'echo $$ > \(marker.path); exec sleep 900' & sleep 900"]).line
        let escaped = try #require(marker.read().flatMap { Int32($0) })
        #expect(service.group.children().contains("job-\(id)-1"), "\(service.group.children())")
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
        _ = try daemon.orchctl(["wait", id])
        #expect(ProcessGroup(id: escaped).isGone)
        #expect(service.group.children() == ["daemon"], "the job's cgroup was removed: \(service.group.children())")
    }

    @Test("without Delegate=yes, a service falls back to process-group and says to add it",
        .enabled(if: CgroupSupport.shouldRun, Comment(rawValue: CgroupSupport.skipReason)))
    func notDelegated() throws {
        let service = try ServiceGroup(delegated: false)
        let daemon = try TestDaemon(launcher: service.launcher)
        defer { daemon.crash() }
        #expect(try daemon.orchctl(["info"]).standardOutput.contains("containment:     process-group"))
        #expect(daemon.daemonLog.contains("is not delegated (add Delegate=yes to the unit"), "\(daemon.daemonLog)")
        #expect(service.group.children().isEmpty, "orchd left the service's cgroup alone")
    }
}
