import Foundation
import Glibc
import Testing
import TestWaitLimits

/// A queue whose jobs run on a real single-node Slurm cluster (``SlurmCluster``), driven with
/// the real orchd and orchctl: submit, results, logs, dependencies, retries, timeouts, cancel,
/// a crash of orchd while jobs run in Slurm, and many jobs at once.
@Suite("Slurm queues end to end")
struct SlurmQueueTests {
    /// A daemon that reaches the test cluster, with queue `hpc` on Slurm.
    private func slurmDaemon(concurrency: Int = 4) throws -> (TestDaemon, SlurmCluster) {
        let cluster = try SlurmCluster.shared()
        let daemon = try TestDaemon(concurrency: concurrency, environment: cluster.environment)
        let added = try daemon.orchctl(["queue", "add", "hpc", "--executor", "slurm", "--concurrency", String(concurrency)])
        #expect(added.status == 0, "\(added)")
        return (daemon, cluster)
    }

    private func job(_ daemon: TestDaemon, _ id: String) throws -> [String: Any] {
        let shown = try daemon.orchctl(["show", id, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any], "\(shown)")
    }

    private func attempts(_ daemon: TestDaemon, _ id: String) throws -> [[String: Any]] {
        try job(daemon, id)["attempts"] as? [[String: Any]] ?? []
    }

    /// A FIFO jobs block on (`cat gate`) until the test opens it for writing.
    private func makeGate(_ daemon: TestDaemon, _ name: String) throws -> String {
        let path = daemon.directory + "/" + name
        try #require(mkfifo(path, 0o666) == 0)
        return path
    }

    private func open(gate path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do { try release(gate: path) } catch { Issue.record(error, sourceLocation: sourceLocation) }
    }

    /// Waits until squeue no longer lists `ids` as pending or running. Slurm tells no one when
    /// a job ends, so its answer is asked again every 50 ms, for at most 60 s.
    private func waitUntilGoneFromSqueue(_ cluster: SlurmCluster, _ ids: Set<String>) throws -> Bool {
        for _ in 0..<1200 {
            if try cluster.liveJobIDs().isDisjoint(with: ids) { return true }
            usleep(50_000)
        }
        return false
    }

    /// Whether the batch script of job `id`'s first attempt (run as root) has written its exit
    /// status within 60 s: woken by inotify(7) on the log directory, into which the script
    /// renames the file, never by polling.
    private func waitForExitStatus(_ daemon: TestDaemon, _ id: String) -> Bool {
        let directory = daemon.stateDirectory + "/logs/0"
        let path = directory + "/\(id).1.exit"
        let watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard watch >= 0 else { return false }
        defer { close(watch) }
        guard inotify_add_watch(watch, directory, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else { return false }
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: path) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var pollFD = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            _ = poll(&pollFD, 1, Int32(left * 1000))
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        }
        return true
    }

    /// The Slurm job ID `show` gives job `id` once orchd has it; asked again every 50 ms (orchd
    /// tells no one), for at most 60 s.
    private func waitForSlurmJobID(_ daemon: TestDaemon, _ id: String) throws -> String? {
        for _ in 0..<1200 {
            if let slurmID = try job(daemon, id)["slurmJobId"] as? String { return slurmID }
            usleep(50_000)
        }
        return nil
    }

    /// The jobs of this daemon that Slurm knows (any state), from the comment orchd gives each.
    private func slurmJobs(of daemon: TestDaemon, _ cluster: SlurmCluster) throws -> [[String: Any]] {
        let answer = try cluster.run("/usr/bin/squeue", ["--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.standardOutput.utf8)) as? [String: Any])
        let jobs = object["jobs"] as? [[String: Any]] ?? []
        return jobs.filter { ($0["comment"] as? String ?? "").hasSuffix("state=\(daemon.stateDirectory)") }
    }

    @Test("a job in a slurm queue runs through sbatch: exit code 3 reaches wait, its output logs, and show has its Slurm job ID")
    func exitCodeLogsAndSlurmID() throws {
        let (daemon, cluster) = try slurmDaemon()
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo out; echo err >&2; exit 3"]).line
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 3, "\(waited)\n\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "out\n")
        #expect(try daemon.orchctl(["logs", "--stderr", id]).standardOutput == "err\n")
        let attempts = try attempts(daemon, id)
        let slurmID = try #require(attempts.first?["slurmJobId"] as? String, "\(attempts)")
        #expect(attempts.first?["result"] as? String == "failed" && attempts.first?["exitCode"] as? Int == 3)
        let shown = try daemon.orchctl(["show", id]).standardOutput
        #expect(shown.contains("slurm job \(slurmID)"), "\(shown)")
        let names = try slurmJobs(of: daemon, cluster).filter { String(describing: $0["job_id"] ?? "") == slurmID }
        #expect(names.first?["name"] as? String == "orchd-\(id)", "Slurm has it under the job's name")
        // Recovery tells orchd's submission from a look-alike by this user.
        #expect(names.first?["user_id"] as? Int == Int(geteuid()), "squeue --json gives the job's user_id: \(names)")
        let queues = try daemon.orchctl(["queues"]).standardOutput
        #expect(queues.contains("hpc    slurm") && queues.contains("yes"), "queues shows the executor and that Slurm answered:\n\(queues)")
    }

    @Test("a Slurm job gets its argv, environment and working directory exactly: quotes, spaces, $, backslashes, newlines, unicode")
    func exactArgumentsEnvironmentDirectory() throws {
        let (daemon, _) = try slurmDaemon()
        let directory = daemon.directory + "/work dir 'q' $HOME"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let words = ["it's", "two words", "$HOME", "`id`", "back\\slash", "new\nline", "ünïcødé ✓", "", "--", "-n", "\"dq\""]
        let environment = ["PATH": "/usr/bin:/bin", "ODD": "a b $X 'q' \"d\"\nline2 ✓", "EMPTY": ""]
        let submitted = try TestDaemon.run(
            Binaries.orchctl, ["--socket", daemon.socketPath, "submit", "--queue", "hpc", "--", "/usr/bin/printf", "[%s]\\n"] + words,
            workingDirectory: directory, environment: environment)
        let id = submitted.line
        #expect(try daemon.orchctl(["wait", id]).status == 0, "\(submitted)\n\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["logs", id]).standardOutput == words.map { "[\($0)]\n" }.joined())

        let printed = try TestDaemon.run(
            Binaries.orchctl, ["--socket", daemon.socketPath, "submit", "--queue", "hpc", "--shell", "pwd; env -0 > ../env.bin"],
            workingDirectory: directory, environment: environment).line
        #expect(try daemon.orchctl(["wait", printed]).status == 0)
        #expect(try daemon.orchctl(["logs", printed]).standardOutput == directory + "\n")
        let dump = try Data(contentsOf: URL(fileURLWithPath: daemon.directory + "/env.bin"))
        var seen: [String: String] = [:]
        for entry in dump.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            seen[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        // /bin/sh adds PWD (and may add SHLVL, OLDPWD); Slurm's variables but the job ID stay out.
        let shellAdded: Set<String> = ["PWD", "SHLVL", "OLDPWD", "_"]
        let expected = environment.merging(["ORCHD_JOB_ID": printed, "ORCHD_STATE_DIR": daemon.stateDirectory]) { $1 }
        #expect(seen.filter { !shellAdded.contains($0.key) && $0.key != "SLURM_JOB_ID" } == expected)
        #expect(seen["SLURM_JOB_ID"].map { !$0.isEmpty } == true)
    }

    @Test("--after works between a local job and a Slurm job, both ways")
    func dependenciesAcrossExecutors() throws {
        let (daemon, _) = try slurmDaemon()
        let records = daemon.directory + "/records"
        let local = try daemon.orchctl(["submit", "--shell", "echo local1 >> '\(records)'"]).line
        let slurm = try daemon.orchctl(["submit", "--queue", "hpc", "--after", local, "--shell", "echo slurm >> '\(records)'"]).line
        let last = try daemon.orchctl(["submit", "--after", slurm, "--shell", "echo local2 >> '\(records)'"]).line
        #expect(try daemon.orchctl(["wait", last]).status == 0, "\(daemon.daemonLog)")
        #expect(try String(contentsOfFile: records, encoding: .utf8) == "local1\nslurm\nlocal2\n")
        #expect(try job(daemon, slurm)["result"] as? String == "succeeded")

        let failing = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "exit 4"]).line
        let dependent = try daemon.orchctl(["submit", "--after", failing, "--", "true"]).line
        #expect(try daemon.orchctl(["wait", dependent]).status == 1)
        #expect(try job(daemon, dependent)["result"] as? String == "dependency_failed")
    }

    @Test("--retries submits a failed Slurm job again, each attempt with its own Slurm job ID")
    func retriesFailedSlurmJob() throws {
        let (daemon, _) = try slurmDaemon()
        #expect(try daemon.orchctl(["queue", "set", "hpc", "--retry-base", "10ms", "--retry-cap", "10ms"]).status == 0)
        let counter = daemon.directory + "/count"
        let id = try daemon.orchctl([
            "submit", "--queue", "hpc", "--retries", "2", "--shell", "echo x >> '\(counter)'; [ $(wc -l < '\(counter)') -ge 2 ]",
        ]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0, "\(daemon.daemonLog)")
        let attempts = try attempts(daemon, id)
        #expect(attempts.map { $0["result"] as? String } == ["failed", "succeeded"], "\(attempts)")
        let ids = attempts.compactMap { $0["slurmJobId"] as? String }
        #expect(ids.count == 2 && Set(ids).count == 2, "\(attempts)")
    }

    @Test("--timeout ends a Slurm job as timed_out, and Slurm's job with it")
    func timeoutEndsSlurmJob() throws {
        let (daemon, cluster) = try slurmDaemon()
        // The timeout counts from the submission, so the job may end pending or running.
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--timeout", "3s", "--", "sleep", "600"]).line
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 124, "\(waited)\n\(daemon.daemonLog)")
        #expect(try job(daemon, id)["result"] as? String == "timed_out")
        let slurmID = try #require(try attempts(daemon, id).first?["slurmJobId"] as? String)
        #expect(try !cluster.liveJobIDs().contains(slurmID), "the Slurm job was ended too")
    }

    @Test("cancel ends a running Slurm job as cancelled, and squeue no longer lists it")
    func cancelRunningSlurmJob() throws {
        let (daemon, cluster) = try slurmDaemon()
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; exec sleep 600"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let slurmID = try #require(try job(daemon, id)["slurmJobId"] as? String, "a running job shows its Slurm job ID")
        #expect(try cluster.liveJobIDs().contains(slurmID))
        // Slurm must not run it again by itself after a node failure or preemption (JobRequeue=1
        // is Slurm's default): orchd's --retries decides.
        let shown = try cluster.run("/usr/bin/scontrol", ["show", "job", slurmID]).standardOutput
        #expect(shown.contains("Requeue=0"), "\(shown)")
        let cancelled = try daemon.orchctl(["cancel", id])
        #expect(cancelled.status == 0, "\(cancelled)")
        #expect(try job(daemon, id)["result"] as? String == "cancelled")
        #expect(try !cluster.liveJobIDs().contains(slurmID), "cancel returned only once Slurm ended the job")
    }

    @Test("an exit over 128 that Slurm keeps no record of (no accounting, past MinJobAge), with no stop, is the job's result: failed 200, not interrupted")
    func highStatusWithoutSlurmRecord() throws {
        let base = "/tmp/orchd-forgotten-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let (freeze, gone, cache) = (base + ".freeze", base + ".gone", base + ".cache")
        defer { for path in [freeze, gone, cache, cache + ".tmp"] { unlink(path) } }
        // squeue answers as Slurm does, keeping its last answer; while FREEZE exists it gives
        // that answer again (orchd sees the job still running while it ends), and while GONE
        // exists no job at all. sacct has no record.
        let (daemon, _) = try slurmDaemon(wrapping: [
            "squeue": """
                if [ -e '\(gone)' ]; then echo '{"meta":{},"errors":[],"jobs":[]}'; exit 0; fi
                if [ -e '\(freeze)' ] && [ -s '\(cache)' ]; then cat '\(cache)'; exit 0; fi
                out=$(/usr/bin/squeue "$@"); code=$?
                if [ $code -eq 0 ]; then printf '%s\\n' "$out" > '\(cache).tmp' && mv '\(cache).tmp' '\(cache)'; fi
                printf '%s\\n' "$out"; exit $code
                """,
            "sacct": "echo 'sacct: error: Problem talking to the database: Connection refused' >&2; exit 1",
        ])
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let release = daemon.directory + "/release"
        try #require(mkfifo(release, 0o666) == 0)
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; read x < '\(release)'; exit 200"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        _ = try #require(try waitForSlurmJobID(daemon, id), "\(daemon.daemonLog)")
        try Data().write(to: URL(fileURLWithPath: freeze))
        try TestWaitLimits.release(gate: release)
        #expect(waitForExitStatus(daemon, id), "the script wrote the exit status")
        try Data().write(to: URL(fileURLWithPath: gone))
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 200, "\(waited)\n\(daemon.daemonLog)")
        #expect(try job(daemon, id)["result"] as? String == "failed", "\(daemon.daemonLog)")
    }

    @Test("a Slurm job someone else scancels is recorded cancelled, though its command dies of the SIGTERM before the batch script gets its own and the script writes 143")
    func outsideScancel() throws {
        let (daemon, cluster) = try slurmDaemon()
        let started = try ReadyMarker(path: daemon.directory + "/started")
        // Slurm signals the deepest process first: `sleep`, the command, dies of the SIGTERM
        // and the script, not yet signalled, writes its 143.
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; exec sleep 600"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let slurmID = try #require(try waitForSlurmJobID(daemon, id), "\(daemon.daemonLog)")
        #expect(try cluster.run("/usr/bin/scancel", [slurmID]).status == 0)
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 1, "\(waited)")
        #expect(try job(daemon, id)["result"] as? String == "cancelled", "\(daemon.daemonLog)")
    }

    @Test("suspend and continue go to Slurm (scontrol suspend, resume): squeue shows the job SUSPENDED, then RUNNING, and it finishes")
    func suspendAndContinueSlurmJob() throws {
        let (daemon, cluster) = try slurmDaemon()
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = try makeGate(daemon, "gate")
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; cat '\(gate)'; echo done"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let slurmID = try #require(try job(daemon, id)["slurmJobId"] as? String, "a running job shows its Slurm job ID")
        let suspended = try daemon.orchctl(["suspend", id])
        #expect(suspended.status == 0, "\(suspended)\n\(daemon.daemonLog)")
        #expect(try job(daemon, id)["suspended"] as? Bool == true)
        #expect(try cluster.state(of: slurmID) == "SUSPENDED")
        let continued = try daemon.orchctl(["continue", id])
        #expect(continued.status == 0, "\(continued)")
        #expect(try job(daemon, id)["suspended"] as? Bool == false)
        #expect(try cluster.state(of: slurmID) == "RUNNING")
        open(gate: gate)
        #expect(try daemon.orchctl(["wait", id]).status == 0, "\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "done\n")
    }

    @Test("a user's job in a Slurm queue of a root orchd runs as that user (sbatch --uid, --gid), its output in the user's log directory")
    func slurmJobRunsAsItsOwner() throws {
        let cluster = try SlurmCluster.shared()
        let (a, _, _) = try TestUser.users()
        let daemon = try TestDaemon(
            configuration: "admin-group = \(TestUser.adminGroup)\nqueue.hpc = executor=slurm\n", environment: cluster.environment,
            sharedWithUsers: true)
        let id = try daemon.orchctl(as: a, ["submit", "--queue", "hpc", "--shell", "id -u; id -g; exit 3"]).line
        let waited = try daemon.orchctl(as: a, ["wait", id])
        #expect(waited.status == 3, "\(waited)\n\(daemon.daemonLog)")
        #expect(try daemon.orchctl(as: a, ["logs", id]).standardOutput == "\(a.uid)\n\(a.gid)\n")
        var info = stat()
        #expect(stat(daemon.stateDirectory + "/logs/\(a.uid)/\(id).1.out", &info) == 0 && info.st_uid == a.uid, "the log is the user's")
        let entry = try slurmJobs(of: daemon, cluster).first { $0["name"] as? String == "orchd-\(id)" }
        #expect(entry?["user_id"] as? Int == Int(a.uid), "squeue --json gives the owner as the job's user_id: \(String(describing: entry))")
        #expect(try job(daemon, id)["attempts"].map { ($0 as? [[String: Any]])?.first?["slurmJobId"] != nil } == true)
    }

    @Test("fair share and holds apply to a Slurm queue: max-running-per-user keeps a user's second job out of Slurm, a held job is not submitted until released")
    func perUserLimitAndHoldInSlurmQueue() throws {
        let (daemon, _) = try slurmDaemon()
        #expect(try daemon.orchctl(["queue", "set", "hpc", "--max-running-per-user", "1"]).status == 0)
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = try makeGate(daemon, "gate")
        let first = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; cat '\(gate)'"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let second = try daemon.orchctl(["submit", "--queue", "hpc", "--", "true"]).line
        let waiting = try job(daemon, second)
        #expect(waiting["state"] as? String == "queued" && waiting["slurmJobId"] == nil, "the user has 1 job in Slurm already: \(waiting)")
        #expect(try daemon.orchctl(["hold", second]).status == 0)
        open(gate: gate)
        #expect(try daemon.orchctl(["wait", first]).status == 0, "\(daemon.daemonLog)")
        let held = try job(daemon, second)
        #expect(held["state"] as? String == "queued" && held["held"] as? Bool == true && held["slurmJobId"] == nil, "\(held)")
        #expect(try daemon.orchctl(["release", second]).status == 0)
        #expect(try daemon.orchctl(["wait", second]).status == 0, "\(daemon.daemonLog)")
        #expect(try attempts(daemon, second).first?["slurmJobId"] as? String != nil, "it ran in Slurm once released")
    }

    @Test("kill -9 of orchd while three Slurm jobs run: they finish in Slurm meanwhile, and the restarted orchd records their ends and submits none again")
    func crashWhileJobsRunInSlurm() throws {
        let (daemon, cluster) = try slurmDaemon()
        let gate = try makeGate(daemon, "gate")
        var ids: [String] = []
        var markers: [ReadyMarker] = []
        for code in [0, 3, 5] {
            let marker = try ReadyMarker(path: daemon.directory + "/started-\(code)")
            markers.append(marker)
            ids.append(try daemon.orchctl([
                "submit", "--queue", "hpc", "--shell", "echo go > '\(marker.path)'; cat '\(gate)' >/dev/null; echo done \(code); exit \(code)",
            ]).line)
        }
        for marker in markers { #expect(marker.read(timeout: 60) != nil, "\(daemon.daemonLog)") }
        var slurmIDs: [String: String] = [:]
        for id in ids { slurmIDs[id] = try #require(try job(daemon, id)["slurmJobId"] as? String, "job \(id) has its Slurm ID recorded") }

        daemon.crash()
        open(gate: gate)
        #expect(try waitUntilGoneFromSqueue(cluster, Set(slurmIDs.values)), "the jobs finished in Slurm while orchd was down")
        let endedBy = Date()

        try daemon.start()
        for (id, code) in zip(ids, [0, 3, 5]) {
            let waited = try daemon.orchctl(["wait", id])
            #expect(waited.status == Int32(code), "job \(id): \(waited)\n\(daemon.daemonLog)")
            // Recorded as ended when it ended in Slurm, not when orchd came back.
            let finishedAt = try #require(try job(daemon, id)["finishedAt"] as? String)
            let finished = try Date(finishedAt, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
            #expect(finished <= endedBy, "job \(id) finished at \(finishedAt), before orchd's restart at \(endedBy)")
            #expect(try daemon.orchctl(["logs", id]).standardOutput == "done \(code)\n")
            let attempts = try attempts(daemon, id)
            #expect(attempts.count == 1, "one attempt, not submitted again: \(attempts)")
            #expect(attempts.first?["slurmJobId"] as? String == slurmIDs[id])
        }
        let known = try slurmJobs(of: daemon, cluster)
        #expect(known.count == 3, "Slurm got exactly the three jobs: \(known.map { $0["job_id"] ?? "?" })")
    }

    /// A daemon whose `PATH` starts with `wrappers/` in its directory, where a test puts a
    /// script standing in front of a real Slurm command, to inject one fault.
    private func slurmDaemon(wrapping scripts: [String: String]) throws -> (TestDaemon, SlurmCluster) {
        let cluster = try SlurmCluster.shared()
        var template = Array("/tmp/orchd-wrappers-XXXXXX".utf8CString)
        let wrappers = String(cString: try #require(mkdtemp(&template)))
        chmod(wrappers, 0o755)
        for (command, body) in scripts {
            let path = wrappers + "/" + command
            try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o755)
        }
        let path = wrappers + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let daemon = try TestDaemon(concurrency: 4, environment: cluster.environment.merging(["PATH": path]) { $1 }, removing: [wrappers])
        let added = try daemon.orchctl(["queue", "add", "hpc", "--executor", "slurm", "--concurrency", "4"])
        #expect(added.status == 0, "\(added)")
        return (daemon, cluster)
    }

    /// `orchctl ARGUMENTS` run in the background (a cancel that waits on Slurm), killed if it
    /// has not ended after two minutes, so a call that never returns fails its test instead of
    /// holding up the run.
    private final class BackgroundOrchctl {
        private let process = Process()
        private let limit: DispatchWorkItem

        init(_ daemon: TestDaemon, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Binaries.orchctl)
            process.arguments = ["--socket", daemon.socketPath] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            limit = DispatchWorkItem { [pid = process.processIdentifier] in kill(pid, SIGKILL) }
            limitTimers.asyncAfter(deadline: .now() + 120, execute: limit)
        }

        /// Waits for its end, and returns its exit status.
        func waitForExit() -> Int32 {
            process.waitUntilExit()
            limit.cancel()
            return process.terminationStatus
        }
    }

    /// An sbatch held at a gate (a FIFO) until the test opens it: a slow controller, say.
    private struct HeldSbatch {
        let gate: String
        let started: ReadyMarker
        /// The wrapper's body: says it is held, waits at the gate, then runs the real sbatch.
        var script: String { "echo held > '\(started.path)'; read x < '\(gate)'; exec /usr/bin/sbatch \"$@\"" }

        init() throws {
            gate = "/tmp/orchd-sbatch-gate-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            guard mkfifo(gate, 0o666) == 0 else { throw TestFailure("mkfifo \(gate): errno \(errno)") }
            started = try ReadyMarker(path: gate + ".started")
        }

        func remove() {
            // Lets a wrapper still held go (a test that failed leaves one): without a reader,
            // O_NONBLOCK makes the open fail at once instead of waiting.
            let writer = Glibc.open(gate, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            unlink(gate)
            unlink(started.path)
        }
    }

    /// An squeue that, while `FLAG` exists, answers as Slurm 22.05's does when it cannot reach
    /// the controller: exit 0, an `errors` entry and no jobs.
    private static func failingSqueue(flag: String) -> String {
        """
        if [ -e '\(flag)' ]; then
          echo '{"meta":{},"errors":[{"description":"Failed while looking for jobs","error_number":1,"error":"Unable to contact slurm controller (connect failure)","source":"slurm_load_jobs"}],"jobs":[]}'
          exit 0
        fi
        exec /usr/bin/squeue "$@"
        """
    }

    @Test("squeue reporting errors with exit 0 (controller unreachable) ends no job: the running job goes on, runs once and succeeds")
    func squeueErrorsAreNotAnEmptyQueue() throws {
        let flag = "/tmp/orchd-squeue-down-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let (daemon, _) = try slurmDaemon(wrapping: ["squeue": Self.failingSqueue(flag: flag)])
        defer { unlink(flag) }
        let gate = try makeGate(daemon, "gate")
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let runs = daemon.directory + "/runs"
        let id = try daemon.orchctl([
            "submit", "--queue", "hpc", "--retries", "2", "--shell", "echo run >> '\(runs)'; echo go > '\(started.path)'; cat '\(gate)' >/dev/null",
        ]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        try Data().write(to: URL(fileURLWithPath: flag))
        #expect(daemon.waitForLog(containing: "squeue failed: squeue reported: Failed while looking for jobs"), "\(daemon.daemonLog)")
        #expect(try job(daemon, id)["state"] as? String == "running", "\(daemon.daemonLog)")
        unlink(flag)
        open(gate: gate)
        #expect(try daemon.orchctl(["wait", id]).status == 0, "\(daemon.daemonLog)")
        #expect(try attempts(daemon, id).count == 1, "not submitted again")
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "run\n")
        #expect(daemon.daemonLog.contains("squeue answers again"), "\(daemon.daemonLog)")
    }

    @Test("a recorded Slurm ID that squeue shows as another job (a controller that lost its state reuses IDs) is not followed: the attempt is not recorded with that job's end")
    func reusedSlurmIDIsNotFollowed() throws {
        let flag = "/tmp/orchd-squeue-foreign-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // While FLAG exists, squeue shows every orchd job under another name and comment, as
        // a reused ID would.
        let (daemon, _) = try slurmDaemon(wrapping: ["squeue": """
            if [ -e '\(flag)' ]; then
              /usr/bin/squeue "$@" | sed -e 's/"name": *"orchd-[0-9]*"/"name":"foreign"/g' -e 's/"comment": *"orchd [^"]*"/"comment":""/g'
              exit 0
            fi
            exec /usr/bin/squeue "$@"
            """])
        defer { unlink(flag) }
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = try makeGate(daemon, "gate")
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; cat '\(gate)' >/dev/null"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let slurmID = try #require(try job(daemon, id)["slurmJobId"] as? String)
        try Data().write(to: URL(fileURLWithPath: flag))
        #expect(daemon.waitForLog(containing: "job \(id): Slurm job \(slurmID) is now another job ('foreign')"), "\(daemon.daemonLog)")
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status != 0, "\(waited)")
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "interrupted", "\(shown)")
        open(gate: gate)
    }

    @Test("kill -9 of orchd while its sbatch is in flight: the restarted orchd waits for that sbatch and follows the job it submitted, which runs once")
    func crashWhileSbatchIsInFlight() throws {
        let sbatch = try HeldSbatch()
        defer { sbatch.remove() }
        let (daemon, _) = try slurmDaemon(wrapping: ["sbatch": sbatch.script])
        let runs = daemon.directory + "/runs"
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--retries", "2", "--shell", "echo run >> '\(runs)'"]).line
        #expect(sbatch.started.read(timeout: 60) != nil, "\(daemon.daemonLog)")

        daemon.crash()
        try daemon.start()
        #expect(daemon.waitForLog(containing: "job \(id): an sbatch the previous daemon started for it still runs"), "\(daemon.daemonLog)")
        open(gate: sbatch.gate)
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
        let made = try attempts(daemon, id)
        #expect(made.count == 1, "the one attempt, followed: \(made)")
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "run\n")
    }

    @Test("a cancel after kill -9 while sbatch hangs returns: the previous daemon's sbatch is stopped, the job ends cancelled, and Slurm has no job of it")
    func cancelAfterCrashWhileSbatchHangs() throws {
        let sbatch = try HeldSbatch()
        defer { sbatch.remove() }
        let (daemon, cluster) = try slurmDaemon(wrapping: ["sbatch": sbatch.script])
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--", "true"]).line
        #expect(sbatch.started.read(timeout: 60) != nil, "\(daemon.daemonLog)")

        daemon.crash()
        try daemon.start()
        #expect(daemon.waitForLog(containing: "job \(id): an sbatch the previous daemon started for it still runs"), "\(daemon.daemonLog)")
        // Killed after two minutes if it never returns, as it did while the held sbatch ran on.
        let cancelled = try BackgroundOrchctl(daemon, ["cancel", id]).waitForExit()
        #expect(cancelled == 0, "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("job \(id): stopping the sbatch the previous daemon started for it"))
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "cancelled", "\(shown)\n\(daemon.daemonLog)")
        #expect(try slurmJobs(of: daemon, cluster).isEmpty)
        #expect(try attempts(daemon, id).count == 1)
    }

    @Test("kill -9 while sbatch is in flight, the orphaned sbatch submitting while the restarted orchd's squeue runs: the lookup waits for it and follows its job, which runs once")
    func orphanedSbatchEndsDuringSqueue() throws {
        let base = "/tmp/orchd-race-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let (sbatchGate, sbatchDone, flag) = (base + ".gate", base + ".done", base + ".flag")
        try #require(mkfifo(sbatchGate, 0o666) == 0 && mkfifo(sbatchDone, 0o666) == 0)
        let sbatchStarted = try ReadyMarker(path: base + ".started")
        defer { for path in [sbatchGate, sbatchDone, flag, sbatchStarted.path] { unlink(path) } }
        // sbatch waits at the gate, and says when it has submitted. While FLAG exists, squeue
        // takes its answer, then lets sbatch go and waits until it has submitted, then gives
        // the answer it took before: the job submitted while squeue ran.
        let (daemon, _) = try slurmDaemon(wrapping: [
            "sbatch": """
                echo held > '\(sbatchStarted.path)'; read x < '\(sbatchGate)'
                /usr/bin/sbatch "$@"; code=$?; echo done > '\(sbatchDone)'; exit $code
                """,
            "squeue": """
                out=$(/usr/bin/squeue "$@"); code=$?
                if [ -e '\(flag)' ]; then rm -f '\(flag)'; : > '\(sbatchGate)'; read x < '\(sbatchDone)'; fi
                printf '%s\\n' "$out"; exit $code
                """,
        ])
        let runs = daemon.directory + "/runs"
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--retries", "2", "--shell", "echo run >> '\(runs)'"]).line
        #expect(sbatchStarted.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        daemon.crash()
        try Data().write(to: URL(fileURLWithPath: flag))
        try daemon.start()
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
        let made = try attempts(daemon, id)
        #expect(made.count == 1, "the one attempt, followed: \(made)\n\(daemon.daemonLog)")
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "run\n")
    }

    @Test("--timeout while sbatch hangs: the timeout counts from the claim, sbatch is stopped, the job ends timed_out, and Slurm has no job of it")
    func timeoutWhileSbatchHangs() throws {
        let sbatch = try HeldSbatch()
        defer { sbatch.remove() }
        let (daemon, cluster) = try slurmDaemon(wrapping: ["sbatch": sbatch.script])
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--timeout", "1s", "--", "true"]).line
        #expect(sbatch.started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 124, "\(waited)\n\(daemon.daemonLog)")
        #expect(try slurmJobs(of: daemon, cluster).isEmpty)
    }

    @Test("a scancel that fails (the controller does not answer) is run again until it succeeds: the cancel then returns and the job ends cancelled")
    func failedScancelIsRetried() throws {
        let flag = "/tmp/orchd-scancel-down-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let attempted = try ReadyMarker(path: flag + ".tried")
        defer { unlink(flag); unlink(attempted.path) }
        let (daemon, cluster) = try slurmDaemon(wrapping: ["scancel": """
            if [ -e '\(flag)' ]; then echo tried > '\(attempted.path)'; echo 'scancel: error: Unable to contact slurm controller (connect failure)' >&2; exit 1; fi
            exec /usr/bin/scancel "$@"
            """])
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; exec sleep 600"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let slurmID = try #require(try job(daemon, id)["slurmJobId"] as? String)
        try Data().write(to: URL(fileURLWithPath: flag))
        let canceller = try BackgroundOrchctl(daemon, ["cancel", id])
        #expect(attempted.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        #expect(daemon.waitForLog(containing: "scancel \(slurmID) for job \(id) failed"), "\(daemon.daemonLog)")
        unlink(flag)
        #expect(canceller.waitForExit() == 0)
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "cancelled", "\(shown)")
        #expect(try waitUntilGoneFromSqueue(cluster, [slurmID]))
    }

    @Test("a cancel while sbatch hangs returns: sbatch is stopped, the job ends cancelled, and Slurm has no job of it")
    func cancelWhileSbatchHangs() throws {
        let sbatch = try HeldSbatch()
        defer { sbatch.remove() }
        let (daemon, cluster) = try slurmDaemon(wrapping: ["sbatch": sbatch.script])
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--", "true"]).line
        #expect(sbatch.started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        let cancelled = try daemon.orchctl(["cancel", id])
        #expect(cancelled.status == 0, "\(cancelled)\n\(daemon.daemonLog)")
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "cancelled", "\(shown)")
        #expect(try slurmJobs(of: daemon, cluster).isEmpty)
    }

    @Test("a command that ends on its own after a cancel began, while the cancel's scancel hangs, is recorded cancelled after kill -9 and a restart: the restarted orchd's stop began before the status was written")
    func statusWrittenAfterAStopBeforeRestart() throws {
        let base = "/tmp/orchd-held-scancel-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let (flag, gate) = (base + ".flag", base + ".gate")
        try #require(mkfifo(gate, 0o666) == 0)
        let held = try ReadyMarker(path: base + ".held")
        defer {
            // Lets the first daemon's scancel, still held, go.
            let writer = Glibc.open(gate, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            for path in [flag, gate, held.path] { unlink(path) }
        }
        // While FLAG exists, scancel says it was called and waits at the gate, and squeue
        // fails: a controller that does not answer, so orchd cannot see the job end (and
        // settle it) before the crash.
        let (daemon, _) = try slurmDaemon(wrapping: [
            "scancel": "if [ -e '\(flag)' ]; then echo held > '\(held.path)'; read x < '\(gate)'; fi; exec /usr/bin/scancel \"$@\"",
            "squeue": Self.failingSqueue(flag: flag),
        ])
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let release = daemon.directory + "/release"
        try #require(mkfifo(release, 0o666) == 0)
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; read x < '\(release)'; exit 0"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        try Data().write(to: URL(fileURLWithPath: flag))
        let canceller = try BackgroundOrchctl(daemon, ["cancel", id])
        #expect(held.read(timeout: 60) != nil, "the cancel's scancel was called: \(daemon.daemonLog)")
        // The command ends on its own, after the stop began: its script writes 0.
        try TestWaitLimits.release(gate: release)
        #expect(waitForExitStatus(daemon, id), "the script wrote the exit status")
        daemon.crash()
        _ = canceller.waitForExit()
        unlink(flag)
        try daemon.start()
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 1, "\(waited)\n\(daemon.daemonLog)")
        #expect(try job(daemon, id)["result"] as? String == "cancelled", "\(daemon.daemonLog)")
    }

    @Test("SIGTERM while a cancel waits for a Slurm job that squeue cannot report: orchd stops, and the restarted one records the job cancelled")
    func stopWhileCancelWaitsOnSlurm() throws {
        let flag = "/tmp/orchd-squeue-down-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let (daemon, cluster) = try slurmDaemon(wrapping: ["squeue": Self.failingSqueue(flag: flag)])
        defer { unlink(flag) }
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo go > '\(started.path)'; exec sleep 600"]).line
        #expect(started.read(timeout: 60) != nil, "\(daemon.daemonLog)")
        try Data().write(to: URL(fileURLWithPath: flag))
        #expect(daemon.waitForLog(containing: "squeue failed"), "\(daemon.daemonLog)")
        let canceller = try BackgroundOrchctl(daemon, ["cancel", id])
        // The cancel has reached orchd once its scancel has ended the job in Slurm.
        let slurmID = try #require(try job(daemon, id)["slurmJobId"] as? String)
        #expect(try waitUntilGoneFromSqueue(cluster, [slurmID]), "\(daemon.daemonLog)")
        // An orchd that never stops is killed by stop(), and its status then fails this.
        #expect(daemon.stop() == 0, "\(daemon.daemonLog)")
        _ = canceller.waitForExit()

        unlink(flag)
        try daemon.start()
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status != 0, "\(waited)")
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "cancelled", "\(shown)\n\(daemon.daemonLog)")
    }

    @Test("a stopped Slurm job ends only once its command has: a timed-out attempt's SIGTERM handler finishes before the retry starts, and a cancel returns after it")
    func stopWaitsForTheCommand() throws {
        let (daemon, _) = try slurmDaemon()
        // The command handles SIGTERM for 3 s: longer than Slurm takes to call the job ended
        // once its batch script is gone, within the cluster's KillWait of 5 s. It waits again
        // after a `wait` returns: Slurm signals the job's processes children first, and a
        // `wait` that saw `sleep` die returns 0 before the shell's own SIGTERM comes.
        func handling(_ marks: String, then: String) -> String {
            "trap 'echo term >> \(marks); sleep 3; echo endterm >> \(marks); exit 1' TERM; echo start >> \(marks); \(then)sleep 600 & while :; do wait; done"
        }
        let marks = daemon.directory + "/marks"
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--timeout", "5s", "--retries", "1", "--shell", handling(marks, then: "")]).line
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 124, "\(waited)\n\(daemon.daemonLog)")
        // The batch script died at the SIGTERM, Slurm said CANCELLED, and the retry started
        // while the first attempt's handler still ran.
        let lines = try String(contentsOfFile: marks, encoding: .utf8).split(separator: "\n")
        #expect(lines == ["start", "term", "endterm", "start", "term", "endterm"], "\(lines)\n\(daemon.daemonLog)")

        let cancelMarks = daemon.directory + "/cancel-marks"
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let cancelled = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", handling(cancelMarks, then: "echo up > \(started.path); ")]).line
        #expect(started.read(timeout: 60) == "up", "\(daemon.daemonLog)")
        let cancel = try daemon.orchctl(["cancel", cancelled])
        #expect(cancel.status == 0, "\(cancel)")
        #expect(try String(contentsOfFile: cancelMarks, encoding: .utf8) == "start\nterm\nendterm\n", "the cancel returned once the command was gone")
    }

    @Test("a command that ends 0 after its timeout's stop began (its child killed first, as Slurm signals the job's processes in turn) is recorded timed out, not succeeded")
    func statusWrittenAfterTheStopBegan() throws {
        let directory = "/tmp/orchd-stop-race-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (child, script, marks) = (directory + "/child", directory + "/script", directory + "/marks")
        // What Slurm does when it is slow between the kills of its SIGTERM round: the command's
        // child dies first, `wait` (no operand) returns 0, and the batch script writes that
        // status before its own SIGTERM comes. The real scancel follows once the script is gone.
        let (daemon, _) = try slurmDaemon(wrapping: ["scancel": """
            i=0; while [ ! -s '\(child)' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
            kill -TERM "$(cat '\(child)')"
            i=0; while kill -0 "$(cat '\(script)')" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
            exec /usr/bin/scancel "$@"
            """])
        let id = try daemon.orchctl([
            "submit", "--queue", "hpc", "--timeout", "3s", "--shell",
            "echo $PPID > '\(script)'; sleep 600 & echo $! > '\(child)'; wait; echo \"ended $?\" >> '\(marks)'",
        ]).line
        let waited = try daemon.orchctl(["wait", id])
        #expect(try String(contentsOfFile: marks, encoding: .utf8) == "ended 0\n", "the command ended 0 after the stop began")
        #expect(waited.status == 124, "\(waited)\n\(daemon.daemonLog)")
        #expect(try job(daemon, id)["result"] as? String == "timed_out", "\(daemon.daemonLog)")
    }

    @Test("a command that ran to its end before a cancel began keeps its own result, though orchd saw the end only after the cancel: an exit over 128 too, which a signal's status would look like",
          arguments: [("true", "succeeded", Int32(0)), ("exit 200", "failed", Int32(200))])
    func statusWrittenBeforeTheStopBegan(command: String, result: String, status: Int32) throws {
        let flag = "/tmp/orchd-squeue-down-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let calls = flag + "-scancel"
        let (daemon, cluster) = try slurmDaemon(wrapping: [
            "squeue": Self.failingSqueue(flag: flag), "scancel": "echo \"$*\" >> '\(calls)'; exec /usr/bin/scancel \"$@\"",
        ])
        defer { unlink(flag); unlink(calls) }
        // squeue fails from the start: orchd does not see the job end until the flag goes.
        try Data().write(to: URL(fileURLWithPath: flag))
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", command]).line
        let slurmID = try #require(try waitForSlurmJobID(daemon, id), "\(daemon.daemonLog)")
        // Gone from Slurm once its batch script has written the status and exited.
        #expect(try waitUntilGoneFromSqueue(cluster, [slurmID]), "\(daemon.daemonLog)")
        let canceller = try BackgroundOrchctl(daemon, ["cancel", id])
        // The stop has begun once its scancel has run (Slurm has nothing left to signal).
        var scancelled = false
        for _ in 0..<1200 where !scancelled {
            scancelled = ((try? String(contentsOfFile: calls, encoding: .utf8)) ?? "").contains(slurmID)
            if !scancelled { usleep(50_000) }
        }
        #expect(scancelled, "\(daemon.daemonLog)")
        unlink(flag)
        _ = canceller.waitForExit()
        #expect(try job(daemon, id)["result"] as? String == result, "\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["wait", id]).status == status)
    }

    @Test("an sbatch that says 'Socket timed out' after Slurm took the job does not submit it again: the job is found by its comment, followed, and runs once")
    func socketTimeoutAfterSubmission() throws {
        let flag = "/tmp/orchd-sbatch-timedout-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(flag) }
        // The first sbatch submits, then fails as a slow controller's client does.
        let (daemon, _) = try slurmDaemon(wrapping: ["sbatch": """
            if [ ! -e '\(flag)' ]; then
              : > '\(flag)'; /usr/bin/sbatch "$@" > /dev/null
              echo 'sbatch: error: Batch job submission failed: Socket timed out on send/recv operation' >&2; exit 1
            fi
            exec /usr/bin/sbatch "$@"
            """])
        let runs = daemon.directory + "/runs"
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo run >> '\(runs)'"]).line
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "run\n", "\(daemon.daemonLog)")
        #expect(try attempts(daemon, id).count == 1)
        #expect(try job(daemon, id)["slurmJobId"] as? String != nil)
    }

    @Test("sbatch output with notices before the job ID: the ID is read from the last line, and the job runs and is followed")
    func noticesBeforeTheJobID() throws {
        let (daemon, _) = try slurmDaemon(wrapping: ["sbatch": "echo 'sbatch: notice: welcome to the cluster'; exec /usr/bin/sbatch \"$@\""])
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--", "true"]).line
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
        #expect(try job(daemon, id)["slurmJobId"] as? String != nil)
    }

    @Test("sbatch exiting 0 with no job ID and no job in Slurm fails the attempt, saying what sbatch printed")
    func noJobIDPrinted() throws {
        let (daemon, _) = try slurmDaemon(wrapping: ["sbatch": "echo 'slurm 22.05.8'; exit 0"])
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--", "true"]).line
        let waited = try daemon.orchctl(["wait", id])
        #expect(waited.status == 127, "\(waited)\n\(daemon.daemonLog)")
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "spawn_failed")
        #expect((shown["reason"] as? String ?? "").contains("sbatch exited 0 but printed no job ID: 'slurm 22.05.8'"), "\(shown)")
    }

    @Test("cancel --signal of a job still pending in Slurm cancels it at once with a plain scancel: it has no process to signal, and scancel --signal would retry for 100 s")
    func signalCancelOfPendingJob() throws {
        let calls = "/tmp/orchd-scancel-calls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(calls) }
        let (daemon, _) = try slurmDaemon(wrapping: ["scancel": "echo \"$*\" >> '\(calls)'; exec /usr/bin/scancel \"$@\""])
        let added = try daemon.orchctl(["queue", "add", "later", "--executor", "slurm", "--slurm-option=--begin=now+1hour"])
        #expect(added.status == 0, "\(added)")
        let id = try daemon.orchctl(["submit", "--queue", "later", "--", "true"]).line
        // In Slurm (pending) once show has its Slurm ID: a cancel before that stops sbatch.
        #expect(try waitForSlurmJobID(daemon, id) != nil, "\(daemon.daemonLog)")
        let cancelled = try BackgroundOrchctl(daemon, ["cancel", "--signal", "INT", id]).waitForExit()
        #expect(cancelled == 0, "\(daemon.daemonLog)")
        #expect(try job(daemon, id)["result"] as? String == "cancelled")
        let made = (try? String(contentsOfFile: calls, encoding: .utf8)) ?? ""
        #expect(!made.contains("--signal"), "\(made)")
    }

    @Test("continue of a Slurm job suspended behind orchd's back (scontrol suspend) resumes it, though orchd had it running")
    func continueAfterOutsideSuspend() throws {
        let (daemon, cluster) = try slurmDaemon()
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--shell", "echo up > '\(started.path)'; exec sleep 600"]).line
        #expect(started.read(timeout: 60) == "up", "\(daemon.daemonLog)")
        let slurmID = try #require(try job(daemon, id)["slurmJobId"] as? String)
        let suspended = try cluster.run("/usr/bin/scontrol", ["suspend", slurmID])
        #expect(suspended.status == 0, "\(suspended)")
        let continued = try daemon.orchctl(["continue", id])
        #expect(continued.status == 0, "\(continued)")
        let state = try cluster.run("/usr/bin/squeue", ["-h", "-j", slurmID, "-o", "%T"])
        #expect(state.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "RUNNING", "\(state)")
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
    }

    @Test("200 quick jobs through a Slurm queue all succeed")
    func manyQuickJobs() throws {
        let (daemon, _) = try slurmDaemon(concurrency: 16)
        let lines = (1...200).map { "echo job \($0)" }.joined(separator: "\n") + "\n"
        let began = Date()
        let submitted = try daemon.orchctl(["submit", "--queue", "hpc", "--batch", "-"], input: lines)
        #expect(submitted.status == 0, "\(submitted)")
        let waited = try daemon.orchctl(["wait", "--queue", "hpc", "--drained"])
        let seconds = Date().timeIntervalSince(began)
        #expect(waited.status == 0, "\(waited)")
        let status = try daemon.orchctl(["status", "--queue", "hpc", "--all", "--json"])
        let jobs = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [[String: Any]])
        #expect(jobs.count == 200)
        #expect(jobs.allSatisfy { $0["result"] as? String == "succeeded" }, "\(jobs.filter { $0["result"] as? String != "succeeded" }.prefix(3))\n\(daemon.daemonLog.suffix(2000))")
        print("200 Slurm jobs through orchd in \(String(format: "%.1f", seconds)) s (\(String(format: "%.1f", 200 / seconds)) jobs/s)")
    }

    @Test("a job sbatch refuses (no such partition) ends spawn_failed with Slurm's message; the queue shows Slurm answered")
    func refusedSubmission() throws {
        let (daemon, _) = try slurmDaemon()
        #expect(try daemon.orchctl(["queue", "set", "hpc", "--slurm-partition", "nosuchpartition"]).status == 0)
        let id = try daemon.orchctl(["submit", "--queue", "hpc", "--", "true"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 127, "\(daemon.daemonLog)")
        let shown = try job(daemon, id)
        #expect(shown["result"] as? String == "spawn_failed")
        #expect((shown["reason"] as? String ?? "").contains("invalid partition"), "\(shown)")
        let queues = try daemon.orchctl(["queues", "--json"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(queues.standardOutput.utf8)) as? [[String: Any]])
        let hpc = try #require(list.first { $0["name"] as? String == "hpc" })
        #expect(hpc["executor"] as? String == "slurm")
        #expect((hpc["slurm"] as? [String: Any])?["partition"] as? String == "nosuchpartition")
        #expect((hpc["slurm"] as? [String: Any])?["answered"] as? Bool == true)
    }

    @Test("a queue's executor, partition and sbatch options come from the configuration file")
    func executorFromConfigurationFile() throws {
        let cluster = try SlurmCluster.shared()
        let daemon = try TestDaemon(configuration: """
            queue.cfg = concurrency=2, executor=slurm, slurm-partition=main, slurm-option=--mem=100M, slurm-option=--nice=0
            """, environment: cluster.environment)
        let id = try daemon.orchctl(["submit", "--queue", "cfg", "--", "echo", "from slurm"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0, "\(daemon.daemonLog)")
        #expect(try job(daemon, id)["attempts"].map { ($0 as? [[String: Any]])?.first?["slurmJobId"] != nil } == true)
        let shown = try daemon.orchctl(["queues"]).standardOutput
        #expect(shown.contains("cfg    slurm     main       --mem=100M --nice=0  yes"), "\(shown)")
    }
}
