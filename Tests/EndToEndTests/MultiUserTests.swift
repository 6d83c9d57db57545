import Foundation
import Glibc
import OrchestratorAPI
import Testing
import TestWaitLimits

/// A root orchd serving several users (the system service): jobs run as their submitter,
/// users see and act on their own jobs only, admins on every job, and users share a queue's
/// slots. Needs root to create the test users (``TestUser``); without it every test fails
/// saying so. CI runs as root.
@Suite("One orchd for every user")
struct MultiUserTests {
    /// A root orchd whose socket every test user can reach, with the test admin group.
    private func sharedDaemon(concurrency: Int = 2, configuration: String = "") throws -> TestDaemon {
        try TestDaemon(
            concurrency: concurrency, configuration: "admin-group = \(TestUser.adminGroup)\n" + configuration,
            sharedWithUsers: true)
    }

    private func mode(_ path: String) -> (mode: UInt32, uid: UInt32)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & 0o7777, info.st_uid)
    }

    private func jobs(_ result: CommandResult) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]], "\(result)")
    }

    @Test("user A's job runs as A with A's groups and home; its log file is A's, mode 0600, in A's own directory")
    func jobRunsAsSubmitter() throws {
        let (a, _, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        #expect(mode(daemon.socketPath)?.mode == 0o666, "every user may connect to the system socket")
        #expect(mode(daemon.stateDirectory + "/orchd.db")?.mode == 0o600, "the database is orchd's alone")
        #expect(mode(daemon.stateDirectory)?.mode == 0o711, "the state directory cannot be listed by others")

        let submitted = try daemon.orchctl(as: a, ["submit", "--shell", "id -u; id -G; echo $HOME; echo $USER"])
        #expect(submitted.status == 0, "\(submitted)")
        let id = submitted.line
        let waited = try daemon.orchctl(as: a, ["wait", id])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
        let lines = try daemon.orchctl(as: a, ["logs", id]).standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(lines)")
        guard lines.count == 4 else { return }
        #expect(lines[0] == String(a.uid))
        #expect(lines[1].split(separator: " ").compactMap { UInt32($0) }.sorted() == (try a.groupIDs()))
        #expect((try a.groupIDs()).count >= 2, "A has a supplementary group, so the check sees it")
        #expect(lines[2] == a.home)
        #expect(lines[3] == a.name)

        let directory = daemon.stateDirectory + "/logs/\(a.uid)"
        #expect(mode(directory).map { [$0.mode, $0.uid] } == [0o700, a.uid])
        #expect(mode(directory + "/\(id).1.out").map { [$0.mode, $0.uid] } == [0o600, a.uid])
        #expect(mode(directory + "/\(id).1.err").map { [$0.mode, $0.uid] } == [0o600, a.uid])

        // A retry writes A's log files again (A's own files now, no longer made by orchd).
        #expect(try daemon.orchctl(as: a, ["retry", id]).status == 0)
        #expect(try daemon.orchctl(as: a, ["wait", id]).status == 0)
        #expect(try daemon.orchctl(as: a, ["logs", id]).standardOutput.hasPrefix("\(a.uid)\n"))
    }

    @Test("user B cannot name A's job in --after (exit 77, nothing stored), in a submit or a batch; B's own job and an admin may")
    func dependencyOnOthersJob() throws {
        let (a, b, admin) = try TestUser.users()
        let daemon = try sharedDaemon()
        let aJob = try daemon.orchctl(as: a, ["submit", "--", "true"]).line
        #expect(try daemon.orchctl(as: a, ["wait", aJob]).status == 0)
        let bJob = try daemon.orchctl(as: b, ["submit", "--", "true"]).line
        let refused = try daemon.orchctl(as: b, ["submit", "--after", bJob, "--after", aJob, "--", "true"])
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.standardError.contains("job \(aJob) belongs to another user"), "\(refused)")
        let batch = try daemon.orchctl(as: b, ["submit", "--batch", "-"], input: "true\n{\"argv\":[\"true\"],\"after\":[\(aJob)]}\n")
        #expect(batch.status == 77, "\(batch)")
        #expect(batch.standardError.hasPrefix("Error: line 2: job \(aJob) belongs to another user"), "the line is named: \(batch)")
        let listed = try daemon.orchctl(["status", "--all", "--json"]).standardOutput
        let stored = try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]] ?? []
        #expect(stored.count == 2, "nothing stored: \(listed)")
        #expect(try daemon.orchctl(as: b, ["submit", "--wait", "--after", bJob, "--", "true"]).status == 0)
        #expect(try daemon.orchctl(as: admin, ["submit", "--wait", "--after", aJob, "--", "true"]).status == 0)
    }

    @Test("user B cannot show, read, cancel, retry, wait on or follow the events of A's job (exit 77, nothing changed), nor read its log; status shows each their own; root sees both; an admin cancels A's job")
    func ownership() throws {
        let (a, b, admin) = try TestUser.users()
        let daemon = try sharedDaemon()
        let aJob = try daemon.orchctl(as: a, ["submit", "--", "sleep", "1000"]).line
        let aDone = try daemon.orchctl(as: a, ["submit", "--", "echo", "secret"]).line
        #expect(try daemon.orchctl(as: a, ["wait", aDone]).status == 0)
        let bJob = try daemon.orchctl(as: b, ["submit", "--", "true"]).line
        #expect(try daemon.orchctl(as: b, ["wait", bJob]).status == 0)
        let before = try daemon.orchctl(["show", aJob, "--json"]).standardOutput

        for command in [["show", aJob], ["logs", aJob], ["cancel", aJob], ["retry", aDone], ["wait", aJob], ["logs", aDone],
                        ["events", "--job", aDone], ["events", "--job", aJob, "--follow"]] {
            let result = try daemon.orchctl(as: b, command)
            #expect(result.status == 77, "\(command): \(result)")
            #expect(result.standardError.contains("belongs to another user"), "\(command): \(result)")
        }
        for command in [["queue", "set", "default", "--concurrency", "5"], ["pause"], ["resume"], ["prune", "--all"], ["reload"]] {
            let result = try daemon.orchctl(as: b, command)
            #expect(result.status == 77, "only admins may \(command): \(result)")
        }
        #expect(try daemon.orchctl(["show", aJob, "--json"]).standardOutput == before, "nothing changed")
        let log = daemon.stateDirectory + "/logs/\(a.uid)/\(aDone).1.out"
        #expect(access(log, R_OK) == 0, "root reads it: the file is there")
        #expect(try b.run("/bin/cat", [log]).status != 0, "B cannot read A's log file")
        #expect(try b.run("/bin/ls", [daemon.stateDirectory + "/logs/\(a.uid)"]).status != 0, "nor list A's log directory")

        let bStatus = try jobs(daemon.orchctl(as: b, ["status", "--json"]))
        #expect(bStatus.compactMap { $0["id"] as? Int }.map(String.init) == [bJob])
        let aStatus = try jobs(daemon.orchctl(as: a, ["status", "--json"]))
        #expect(Set(aStatus.compactMap { $0["id"] as? Int }.map(String.init)) == [aJob, aDone])
        let everyone = try jobs(daemon.orchctl(as: b, ["status", "--all-users", "--json"]))
        let seen = try #require(everyone.first { ($0["id"] as? Int).map(String.init) == aJob })
        #expect(seen["submitterUid"] as? Int == Int(a.uid))
        #expect(seen["argv"] as? [String] == ["sleep", "1000"])
        #expect(seen["cwd"] as? String == "", "others see owner, state and command only")
        let rootStatus = try jobs(daemon.orchctl(["status", "--json"]))
        #expect(Set(rootStatus.compactMap { $0["id"] as? Int }.map(String.init)) == [aJob, aDone, bJob])

        let events = try daemon.orchctl(as: b, ["events"]).standardOutput.split(separator: "\n")
        let jobEvents = try events.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["jobId"] as? Int != nil }
        #expect(!jobEvents.isEmpty)
        #expect(jobEvents.allSatisfy { $0["ownerUid"] as? Int == Int(b.uid) }, "B sees only B's jobs' events: \(jobEvents)")

        #expect(try daemon.orchctl(as: admin, ["events", "--job", aDone]).standardOutput.contains("\"finished\""), "an admin reads them")
        let cancelled = try daemon.orchctl(as: admin, ["cancel", aJob])
        #expect(cancelled.status == 0, "\(cancelled)")
        let shown = try daemon.orchctl(["show", aJob, "--json"])
        #expect(shown.standardOutput.contains("\"cancelled\""), "\(shown)")
    }

    @Test("B's cancel of B's job among many of A's and one that does not exist: B's is cancelled, each other one refused with its own reason (exit 77), A's untouched; an admin's cancel refuses A's finished jobs as finished and cancels the rest")
    func cancelAmongOthersJobs() throws {
        let (a, b, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        let batch = String(repeating: "sleep 1000\n", count: 40)
        let submitted = try daemon.orchctl(as: a, ["submit", "--batch", "-"], input: batch)
        #expect(submitted.status == 0, "\(submitted)")
        let aJobs = submitted.standardOutput.split(separator: "\n").map(String.init)
        #expect(aJobs.count == 40)
        let bJob = try daemon.orchctl(as: b, ["submit", "--", "sleep", "1000"]).line
        let missing = "999999"
        // The missing job first: orchd's first refusal is then not the one that says the
        // others belong to someone else.
        let cancelled = try daemon.orchctl(as: b, ["cancel", missing] + aJobs.prefix(20) + [bJob] + aJobs.dropFirst(20))
        #expect(cancelled.status == 77, "\(cancelled)")
        #expect(cancelled.standardOutput == "cancelled \(bJob)\n", "\(cancelled)")
        let errors = cancelled.standardError.split(separator: "\n")
        #expect(errors.count == 41, "\(cancelled)")
        #expect(errors.filter { $0.contains("belongs to another user") }.count == 40, "\(cancelled)")
        #expect(errors.contains { $0.contains(missing) && !$0.contains("belongs to another user") }, "\(cancelled)")
        let aStatus = try jobs(daemon.orchctl(as: a, ["status", "--all", "--json"]))
        #expect(aStatus.count == 40 && aStatus.allSatisfy { $0["state"] as? String == "queued" }, "\(aStatus)")

        // An admin manages A's jobs: A's live ones are cancelled; finished ones are refused as
        // finished, the others cancelled.
        let cancelledByRoot = try daemon.orchctl(["cancel"] + aJobs)
        #expect(cancelledByRoot.status == 0 && cancelledByRoot.standardError.isEmpty, "\(cancelledByRoot)")
        #expect(try daemon.orchctl(["resume", "default"]).status == 0)
        let done = try daemon.orchctl(as: a, ["submit", "--batch", "-"], input: String(repeating: "true\n", count: 30))
        let finished = done.standardOutput.split(separator: "\n").map(String.init)
        #expect(try daemon.orchctl(["wait"] + finished).status == 0)
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        let live = try daemon.orchctl(as: a, ["submit", "--", "sleep", "1000"]).line
        let byRoot = try daemon.orchctl(["cancel"] + finished.prefix(15) + [live] + finished.dropFirst(15))
        #expect(byRoot.status == 1, "\(byRoot)")
        #expect(byRoot.standardOutput == "cancelled \(live)\n", "\(byRoot)")
        #expect(Set(byRoot.standardError.split(separator: "\n").map(String.init)) == Set(finished.map { "Error: job \($0) has already finished" }), "\(byRoot)")
        #expect(byRoot.standardError.split(separator: "\n").count == 30, "\(byRoot)")
    }

    @Test("a user who stops every process of theirs while their jobs start (kill -STOP -1) cannot keep a start, a cancel or orchd's stop waiting: a process stopped before its exec is killed")
    func stoppedBeforeExec() throws {
        let user = try TestUser.stopper()
        let daemon = try sharedDaemon(concurrency: 8)
        defer { _ = try? TestDaemon.run("/usr/bin/pkill", ["-KILL", "-u", user.name]) }
        #expect(try daemon.orchctl(["queue", "add", "q", "--concurrency", "8"]).status == 0)
        #expect(try daemon.orchctl(["pause", "q"]).status == 0)
        #expect(try daemon.orchctl(as: user, ["submit", "--queue", "q", "--batch", "-"], input: String(repeating: "true\n", count: 60)).status == 0)
        // Stops every process of the user, over and over (kill and [ are the shell's own: it
        // forks nothing), while the queue starts its jobs.
        let stopper = Process()
        stopper.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        stopper.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--", "/bin/sh", "-c",
                             "i=0; while [ $i -lt 60000 ]; do kill -STOP -1 2>/dev/null; i=$((i+1)); done"]
        try stopper.run()
        #expect(try daemon.orchctl(["resume", "q"]).status == 0)
        #expect(stopper.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "the stopping loop did not end")

        // Whatever is still running (its process stopped after its exec, or before it) is
        // cancelled, and every job ends.
        let cancelled = try daemon.orchctl(["cancel", "--queue", "q"])
        #expect(cancelled.status == 0 || cancelled.standardError.contains("no job"), "\(cancelled)")
        let waited = try daemon.orchctl(["wait", "--all", "--timeout", "120s"])
        #expect(waited.status != 124, "\(waited)\n\(daemon.daemonLog)")
        let listed = try jobs(daemon.orchctl(["--json", "status", "--all", "--all-users"]))
        #expect(listed.count == 60 && listed.allSatisfy { $0["state"] as? String == "finished" }, "\(listed)")
        for job in listed where job["result"] as? String == "spawn_failed" {
            #expect((job["reason"] as? String)?.contains("stopped by a signal") == true, "\(job)")
        }
        #expect(daemon.stop() == 0, "\(daemon.daemonLog)")
    }

    @Test("a job of A cannot read orchd's database or B's logs, nor signal B's job or orchd")
    func jobIsConfined() throws {
        let (a, b, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        let marker = try ReadyMarker(path: daemon.directory + "/b-started")
        chmod(marker.path, 0o666)
        let bLogged = try daemon.orchctl(as: b, ["submit", "--", "echo", "b's output"]).line
        #expect(try daemon.orchctl(as: b, ["wait", bLogged]).status == 0)
        let bRunning = try daemon.orchctl(as: b, ["submit", "--shell", "echo started > \(marker.path); exec sleep 1000"]).line
        #expect(marker.read() == "started")
        let shown = try daemon.orchctl(["show", bRunning, "--json"]).standardOutput
        let bPID = try #require((try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any])?["pid"] as? Int)
        let orchdPID = try #require(daemon.process?.processIdentifier)
        let database = daemon.stateDirectory + "/orchd.db"
        let bLog = daemon.stateDirectory + "/logs/\(b.uid)/\(bLogged).1.out"
        #expect(access(database, R_OK) == 0 && access(bLog, R_OK) == 0, "the files are there")

        let script = """
            cat \(database) > /dev/stdout 2>&1; echo "db $?"
            cat \(bLog) 2>&1; echo "log $?"
            kill -0 \(bPID) 2>&1; echo "kill job $?"
            kill -TERM \(orchdPID) 2>&1; echo "kill orchd $?"
            """
        let id = try daemon.orchctl(as: a, ["submit", "--shell", script]).line
        #expect(try daemon.orchctl(as: a, ["wait", id]).status == 0)
        let output = try daemon.orchctl(as: a, ["logs", id]).standardOutput
        for line in ["db 1", "log 1", "kill job 1", "kill orchd 1"] {
            #expect(output.contains(line + "\n"), "\(output)")
        }
        #expect(!output.contains("SQLite format"), "\(output)")
        #expect(try daemon.orchctl(["ping"]).status == 0, "orchd still runs")
        #expect(try daemon.orchctl(as: b, ["cancel", bRunning]).status == 0)
    }

    @Test("with --max-running-per-user 1 and concurrency 4, A's and B's three jobs each run one at a time per user, and the users interleave")
    func fairSharing() throws {
        let (a, b, _) = try TestUser.users()
        let daemon = try sharedDaemon(concurrency: 4)
        #expect(try daemon.orchctl(["queue", "set", "default", "--max-running-per-user", "1"]).status == 0)
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        let records = daemon.directory + "/records"
        #expect(FileManager.default.createFile(atPath: records, contents: nil))
        chmod(records, 0o666)
        var ids: [String] = []
        for user in [a, b] {
            for _ in 0..<3 {
                let job = "echo \"start \(user.name) $ORCHD_JOB_ID\" >> \(records); echo \"end \(user.name) $ORCHD_JOB_ID\" >> \(records)"
                ids.append(try daemon.orchctl(as: user, ["submit", "--shell", job]).line)
            }
        }
        #expect(try daemon.orchctl(["resume", "default"]).status == 0)
        #expect(try daemon.orchctl(["wait"] + ids).status == 0)

        // The jobs' own records: a user's next job starts only after their previous one ended.
        let lines = try String(contentsOfFile: records, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        #expect(lines.count == 12)
        var running: [Substring: Int] = [:]
        for line in lines where line.count == 3 {
            running[line[1], default: 0] += line[0] == "start" ? 1 : -1
            #expect(running[line[1]]! <= 1, "\(line[1]) ran two jobs at once: \(lines)")
        }
        // orchd's own record, in commit order: started and finished events with their owners.
        let events = try daemon.orchctl(["events"]).standardOutput.split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        var inFlight: [Int: Int] = [:]
        var starters: [Int] = []
        for event in events {
            guard let owner = event["ownerUid"] as? Int, let kind = event["kind"] as? String else { continue }
            if kind == "started" {
                inFlight[owner, default: 0] += 1
                starters.append(owner)
                #expect(inFlight[owner]! <= 1, "uid \(owner) had two jobs running: \(events)")
            } else if kind == "finished" {
                inFlight[owner, default: 0] -= 1
            }
        }
        #expect(starters.count == 6)
        // Interleaved: neither user's jobs all got a slot before the other's first. By the
        // claims' times (`startedAt`), not the `started` events' order: an event is written once
        // the process is spawned, and on a loaded machine one user's first spawn was seen to
        // take longer than the other's three whole jobs.
        let claims = try jobs(daemon.orchctl(["status", "--json", "--all", "--all-users"])).compactMap { job -> (owner: Int, at: Date)? in
            guard let owner = job["submitterUid"] as? Int, let at = (job["startedAt"] as? String).flatMap(Timestamp.parse) else { return nil }
            return (owner, at)
        }.sorted { $0.at < $1.at }.map(\.owner)
        #expect(claims.count == 6)
        let firstA = claims.firstIndex(of: Int(a.uid)) ?? 99, lastA = claims.lastIndex(of: Int(a.uid)) ?? -1
        let firstB = claims.firstIndex(of: Int(b.uid)) ?? 99, lastB = claims.lastIndex(of: Int(b.uid)) ?? -1
        #expect(firstB < lastA && firstA < lastB, "claims by owner: \(claims); started events: \(starters)")

        let queues = try jobs(daemon.orchctl(["queues", "--json"]))
        #expect(queues.first { $0["name"] as? String == "default" }?["maxRunningPerUser"] as? Int == 1, "\(queues)")
    }

    @Test("allow-users restricts who may submit; others still see their own jobs")
    func allowUsers() throws {
        let (a, b, _) = try TestUser.users()
        let daemon = try sharedDaemon(configuration: "allow-users = \(a.name)\n")
        #expect(try daemon.orchctl(as: a, ["submit", "--", "true"]).status == 0)
        let refused = try daemon.orchctl(as: b, ["submit", "--", "true"])
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.standardError.contains("allow-users"), "\(refused)")
        #expect(try daemon.orchctl(as: b, ["status"]).status == 0)
    }

    @Test("a per-user orchd (not root) answers only its own user and root: its socket is 0600 in a 0700 directory, another user gets exit 77")
    func perUserDaemon() throws {
        let (a, b, admin) = try TestUser.users()
        let daemon = try TestDaemon(configuration: "admin-group = \(TestUser.adminGroup)\n", sharedWithUsers: true, user: a)
        #expect(mode(daemon.socketPath).map { [$0.mode, $0.uid] } == [0o600, a.uid])
        let id = try daemon.orchctl(as: a, ["submit", "--shell", "id -u"]).line
        #expect(try daemon.orchctl(as: a, ["wait", id]).status == 0)
        #expect(try daemon.orchctl(as: a, ["logs", id]).standardOutput == "\(a.uid)\n")
        for user in [b, admin] {
            let refused = try daemon.orchctl(as: user, ["status"])
            #expect(refused.status == 77, "\(user.name): \(refused)")
        }
        // A socket opened up by hand: orchd itself refuses, and says whose daemon it is.
        chmod(daemon.socketPath, 0o666)
        let refused = try daemon.orchctl(as: b, ["submit", "--", "true"])
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.standardError.contains("this orchd runs as \(a.name) (uid \(a.uid)) and serves only that user and root"), "\(refused)")
        #expect(try daemon.orchctl(["status"]).status == 0, "root may call any orchd")
    }

    @Test("a link A plants in A's log directory never makes orchd write through it: the job fails to start, the target is untouched")
    func plantedLink() throws {
        let (a, _, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        let victim = daemon.directory + "/victim"
        try "root's file\n".write(toFile: victim, atomically: true, encoding: .utf8)
        let first = try daemon.orchctl(as: a, ["submit", "--", "true"]).line
        #expect(try daemon.orchctl(as: a, ["wait", first]).status == 0)
        let next = (Int(first) ?? 0) + 2
        // A's second job plants links where A's third job's logs go.
        let planter = try daemon.orchctl(as: a, [
            "submit", "--shell",
            "cd \"$ORCHD_STATE_DIR/logs/$(id -u)\" && ln -s \(victim) \(next).1.out",
        ]).line
        #expect(try daemon.orchctl(as: a, ["wait", planter]).status == 0)
        let third = try daemon.orchctl(as: a, ["submit", "--", "echo", "overwritten"]).line
        #expect(third == String(next))
        let waited = try daemon.orchctl(as: a, ["wait", third])
        #expect(waited.status != 0, "\(waited)")
        let shown = try daemon.orchctl(as: a, ["show", third]).standardOutput
        #expect(shown.contains("spawn_failed"), "\(shown)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's file\n")
        #expect(mode(victim)?.uid == 0)
    }

    @Test("orchd never reads through what A puts in place of A's log file: a symbolic link, a FIFO, a hard link to root's file; logs refuses, naming the file")
    func plantedLogForReading() throws {
        let (a, _, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        let secret = daemon.directory + "/secret"
        try "root's secret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o600)
        var ids: [String] = []
        for _ in 0..<3 {
            let id = try daemon.orchctl(as: a, ["submit", "--", "echo", "output"]).line
            #expect(try daemon.orchctl(as: a, ["wait", id]).status == 0)
            ids.append(id)
        }
        let directory = daemon.stateDirectory + "/logs/\(a.uid)"
        // A can replace A's own files with a link or a FIFO.
        let replaced = try a.run("/bin/sh", [
            "-c", "cd \(directory) && rm \(ids[0]).1.out \(ids[1]).1.out && ln -s \(secret) \(ids[0]).1.out && mkfifo \(ids[1]).1.out",
        ])
        #expect(replaced.status == 0, "\(replaced)")
        // A hard link to a file that is not A's, where the kernel allows one (fs.protected_hardlinks=0).
        #expect(unlink(directory + "/\(ids[2]).1.out") == 0 && link(secret, directory + "/\(ids[2]).1.out") == 0)

        for id in ids {
            for arguments in [["logs", id], ["logs", "--tail", "1", id], ["logs", "-f", id]] {
                let result = try daemon.orchctl(as: a, arguments)
                #expect(result.status == 1, "\(arguments): \(result)")
                #expect(!result.standardOutput.contains("secret"), "\(arguments): \(result)")
                #expect(result.standardError.contains("not a regular file of the job's owner"), "\(arguments): \(result)")
            }
        }
        #expect(try daemon.orchctl(["ping"]).status == 0, "orchd goes on")
    }

    @Test("unique keys are each user's own: B's --unique K neither is refused by nor reuses A's live job with key K")
    func uniqueKeysPerUser() throws {
        let (a, b, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        let aJob = try daemon.orchctl(as: a, ["submit", "--unique", "nightly", "--name", "a-name", "--label", "team=a", "--", "sleep", "1000"])
        #expect(aJob.status == 0, "\(aJob)")
        let reused = try daemon.orchctl(as: b, ["--json", "submit", "--unique", "nightly", "--reuse", "--", "true"])
        #expect(reused.status == 0, "\(reused)")
        #expect(!reused.standardOutput.contains("a-name") && !reused.standardOutput.contains("team"), "B got a job of its own: \(reused)")
        let bJobs = try jobs(daemon.orchctl(as: b, ["status", "--json"]))
        #expect(bJobs.count == 1, "B's own job was stored: \(bJobs)")
        let own = try daemon.orchctl(as: a, ["submit", "--unique", "nightly", "--reuse", "--", "true"])
        #expect(own.status == 0 && own.line == aJob.line, "A's own job is still reused: \(own)")
        let duplicate = try daemon.orchctl(as: a, ["submit", "--unique", "nightly", "--", "true"])
        #expect(duplicate.status == 1 && duplicate.standardError.contains("unique key 'nightly'"), "A's key still holds for A: \(duplicate)")
        #expect(try daemon.orchctl(["cancel", aJob.line]).status == 0)
    }

    @Test("a job's working directory and command are looked up with its user's rights: where A may not look, a path that exists and one that does not fail alike; others never see the reason")
    func noPathOracle() throws {
        let (a, b, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        let hidden = daemon.directory + "/hidden"
        #expect(mkdir(hidden, 0o700) == 0 && mkdir(hidden + "/sub", 0o755) == 0)
        #expect(FileManager.default.createFile(atPath: hidden + "/tool", contents: Data(), attributes: [.posixPermissions: 0o600]))
        // orchctl checks a working directory itself, as its user: one that exists and one that
        // does not are refused alike where A may not look.
        for directory in ["sub", "missing"] {
            let line = #"{"argv": ["true"], "cwd": "\#(hidden)/\#(directory)"}"#
            let refused = try daemon.orchctl(as: a, ["submit", "--batch", "-"], input: line + "\n")
            #expect(refused.status == 64, "\(refused)")
            #expect(refused.standardError.hasPrefix("Error: line 1: field 'cwd': \(hidden)/\(directory): Permission denied"), "\(refused)")
        }
        // A command is looked up by orchd, as the job's user.
        let batch = [
            #"{"argv": ["tool"], "environment": {"PATH": "\#(hidden)"}}"#,
            #"{"argv": ["missing"], "environment": {"PATH": "\#(hidden)"}}"#,
        ].joined(separator: "\n")
        let submitted = try daemon.orchctl(as: a, ["submit", "--batch", "-"], input: batch + "\n")
        #expect(submitted.status == 0, "\(submitted)")
        let ids = submitted.standardOutput.split(separator: "\n").map(String.init)
        #expect(ids.count == 2)
        guard ids.count == 2 else { return }
        _ = try daemon.orchctl(as: a, ["wait", "--all"])
        var reasons: [String] = []
        for id in ids {
            let shown = try jobs(daemon.orchctl(as: a, ["status", "--json", id]))
            reasons.append((shown.first?["reason"] as? String) ?? "")
        }
        #expect(reasons[0].hasPrefix("permission denied: tool "), "\(reasons)")
        #expect(reasons[1] == reasons[0].replacingOccurrences(of: ": tool ", with: ": missing "), "\(reasons)")

        // Another user sees that they could not start, not why (the reason names their paths).
        let seen = try jobs(daemon.orchctl(as: b, ["status", "--all-users", "--json"]))
        #expect(seen.count == 2, "\(seen)")
        #expect(seen.allSatisfy { $0["result"] as? String == "spawn_failed" && $0["reason"] as? String == "" }, "\(seen)")
    }

    @Test("status --all-users --label by a user who is no admin is refused with a message saying why (exit 77); an admin's works")
    func allUsersLabelFilter() throws {
        let (a, b, admin) = try TestUser.users()
        let daemon = try sharedDaemon()
        let id = try daemon.orchctl(as: a, ["submit", "--label", "team=a", "--", "true"]).line
        let refused = try daemon.orchctl(as: b, ["status", "--all-users", "--label", "team=a"])
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.standardError.contains("only admins may filter every user's jobs by label"), "\(refused)")
        let listed = try jobs(daemon.orchctl(as: admin, ["status", "--all-users", "--label", "team=a", "--json"]))
        #expect(listed.compactMap { ($0["id"] as? Int).map(String.init) } == [id])
    }

    @Test("an admin's plain status, which lists every user's jobs, has the OWNER column; a user's own listing has none")
    func adminStatusShowsOwner() throws {
        let (a, b, admin) = try TestUser.users()
        let daemon = try sharedDaemon()
        #expect(try daemon.orchctl(as: a, ["submit", "--wait", "--", "true"]).status == 0)
        #expect(try daemon.orchctl(as: b, ["submit", "--wait", "--", "true"]).status == 0)
        for listing in [try daemon.orchctl(as: admin, ["status"]), try daemon.orchctl(["status"])] {
            let lines = listing.standardOutput.split(separator: "\n")
            #expect(lines.first?.hasPrefix("ID  OWNER ") == true, "\(listing)")
            #expect(lines.contains { $0.contains(a.name) } && lines.contains { $0.contains(b.name) }, "\(listing)")
        }
        let own = try daemon.orchctl(as: a, ["status"])
        #expect(own.standardOutput.hasPrefix("ID  STATE "), "\(own)")
    }

    @Test("OWNER and the per-user table's USER show the login names orchd looked up, and a uid the password database lacks as that uid")
    func ownerNamesFromOrchd() throws {
        let (a, _, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        #expect(try daemon.orchctl(["queue", "set", "default", "--max-running-per-user", "1"]).status == 0)
        let marker = try ReadyMarker(path: daemon.directory + "/a-running")
        chmod(marker.path, 0o666)
        let running = try daemon.orchctl(as: a, ["submit", "--shell", "echo up > \(marker.path); exec sleep 1000"]).line
        #expect(marker.read() == "up")
        // A uid without a passwd entry: a release orchctl (a static executable) that looked it
        // up itself would load libnss_systemd and crash. Its job waits an hour, never starting.
        var unknown: UInt32 = 3_900_000_000
        while getpwuid(unknown) != nil { unknown += 1 }
        let stranger = try TestDaemon.run(
            "/usr/bin/setpriv",
            ["--reuid=\(unknown)", "--regid=\(unknown)", "--clear-groups", "--", Binaries.orchctl, "--socket", daemon.socketPath,
             "submit", "--delay", "1h", "--", "true"],
            workingDirectory: "/tmp")
        #expect(stranger.status == 0, "\(stranger)")

        let listing = try daemon.orchctl(["status"])
        #expect(listing.status == 0, "\(listing)")
        let rows = listing.standardOutput.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.first?.prefix(2) == ["ID", "OWNER"], "\(listing)")
        #expect(rows.contains { $0.prefix(2) == [running, a.name] }, "\(listing)")
        #expect(rows.contains { $0.prefix(2) == [stranger.line, String(unknown)] }, "\(listing)")
        let queues = try daemon.orchctl(["queues"])
        #expect(queues.status == 0, "\(queues)")
        let perUser = queues.standardOutput.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(perUser.contains(["default", a.name, "1", "1"]), "\(queues)")
        #expect(try daemon.orchctl(["cancel", running, stranger.line]).status == 0)
    }

    @Test("one user holds at most 1024 connections: the next gets TooManyConnections and is closed, and other users are still served")
    func connectionsPerUser() throws {
        let (a, b, _) = try TestUser.users()
        let daemon = try sharedDaemon()
        // B opens 1025 connections and reads what the last one gets (perl-base is essential on
        // Debian); prlimit lets B hold that many descriptors.
        let script = #"""
            use IO::Socket::UNIX;
            $SIG{ALRM} = sub { print "no reply within 60 s\n"; exit 1 };
            alarm 60;
            my @held;
            for (1..1025) {
                push @held, IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect: $!";
            }
            local $/ = "\0";
            my $reply = readline($held[-1]);
            print defined($reply) ? $reply : "closed without a reply";
            print "\n", scalar(@held), " connections\n";
            """#
        // A file, not -e: perl opens /dev/null for -e, which B may not (mode 0640 on some machines).
        let scriptFile = daemon.directory + "/connect.pl"
        try script.write(toFile: scriptFile, atomically: true, encoding: .utf8)
        chmod(scriptFile, 0o644)
        let result = try TestDaemon.run("/usr/bin/prlimit", [
            "--nofile=4096", "--", "/usr/bin/setpriv", "--reuid=\(b.uid)", "--regid=\(b.gid)", "--init-groups", "--",
            "/usr/bin/perl", scriptFile, daemon.socketPath,
        ], workingDirectory: "/tmp")
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.contains("io.orchd.Manager.TooManyConnections"), "\(result)")
        #expect(result.standardOutput.contains("1025 connections"), "\(result)")
        #expect(try daemon.orchctl(as: a, ["submit", "--wait", "--", "true"]).status == 0, "another user is served")
        #expect(try daemon.orchctl(as: b, ["status"]).status == 0, "B again, once those are closed")
    }

    @Test("events --follow shows a user only their own jobs' events, live; an admin follows everyone's")
    func followOwnEvents() throws {
        let (a, b, admin) = try TestUser.users()
        let daemon = try sharedDaemon()
        let bStream = try OrchctlStream(daemon, ["events", "--follow"], as: b)
        let adminStream = try OrchctlStream(daemon, ["events", "--follow"], as: admin)
        defer {
            bStream.stop()
            adminStream.stop()
        }
        // Each stream is live once its first event (daemon_ready, from the backlog) is read.
        #expect(bStream.nextLine() != nil)
        #expect(adminStream.nextLine() != nil)
        let aJob = try daemon.orchctl(as: a, ["submit", "--wait", "--", "true"]).line
        let bJob = try daemon.orchctl(as: b, ["submit", "--wait", "--", "true"]).line

        func events(until jobID: String, in stream: OrchctlStream) -> [[String: Any]] {
            var seen: [[String: Any]] = []
            while let line = stream.nextLine(),
                let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
                seen.append(event)
                if (event["jobId"] as? Int).map(String.init) == jobID && event["kind"] as? String == "finished" { break }
            }
            return seen
        }
        // A's events come before B's job finishes: the filter, not timing, keeps them from B.
        let bSees = events(until: bJob, in: bStream)
        #expect(bSees.contains { ($0["jobId"] as? Int).map(String.init) == bJob })
        #expect(!bSees.contains { ($0["jobId"] as? Int).map(String.init) == aJob }, "\(bSees)")
        let adminSees = events(until: bJob, in: adminStream)
        #expect(adminSees.contains { ($0["jobId"] as? Int).map(String.init) == aJob && $0["ownerUid"] as? Int == Int(a.uid) })
    }

    @Test("orchctl and a per-user orchd refuse /tmp/orchd-UID when another user made it (no XDG_RUNTIME_DIR)")
    func plantedSocketDirectory() throws {
        let (a, b, _) = try TestUser.users()
        let directory = "/tmp/orchd-\(a.uid)"
        try? FileManager.default.removeItem(atPath: directory)
        try #require(mkdir(directory, 0o755) == 0)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #require(chown(directory, b.uid, b.gid) == 0)
        // B listens where A's orchctl looks first.
        let path = directory + "/orchd.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        defer { close(listener) }
        let bound = withUnixAddress(path) { bind(listener, $0, $1) }
        try #require(bound == 0 && listen(listener, 8) == 0 && chown(path, b.uid, b.gid) == 0 && chmod(path, 0o666) == 0)
        let bare = ["-i", "PATH=/usr/bin:/bin", "HOME=/tmp", "API_TOKEN=secret"]
        let submitted = try a.run("/usr/bin/env", bare + [Binaries.orchctl, "submit", "--", "true"])
        #expect(submitted.status == 69, "\(submitted)")
        #expect(submitted.standardError.contains(
            "will not connect to \(path): its directory \(directory) belongs to uid \(b.uid), so another user may have put it there"),
            "\(submitted)")
        #expect(accept(listener, nil, nil) == -1, "nothing reached B's listener")
        // Nor does a per-user orchd of A listen in B's directory.
        var template = Array("/tmp/orchd-e2e-XXXXXX".utf8CString)
        let state = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: state) }
        try #require(chown(state, a.uid, a.gid) == 0)
        let started = try a.run(
            "/usr/bin/timeout", ["20", "/usr/bin/env"] + bare + ["ORCHD_NO_SYSTEMD=1", Binaries.orchd, "--state-dir", state + "/state"])
        #expect(started.status == 1, "\(started)")
        #expect(started.standardError.contains("will not listen on \(path): its directory \(directory) belongs to uid \(b.uid)"), "\(started)")
    }

    @Test("a root orchd creates its socket 0666 in new 0755 directories, from the start")
    func socketDirectoryModes() throws {
        _ = try TestUser.users()  // needs root, as every test here
        var template = Array("/tmp/orchd-run-XXXXXX".utf8CString)
        let base = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socket = base + "/run/orchd/orchd.sock"
        // The later --socket wins over TestDaemon's own.
        let daemon = try TestDaemon(arguments: ["--socket", socket])
        #expect(mode(socket)?.mode == 0o666)
        #expect(mode(base + "/run/orchd")?.mode == 0o755)
        #expect(mode(base + "/run")?.mode == 0o755)
        #expect(try TestDaemon.run(Binaries.orchctl, ["--socket", socket, "ping"]).status == 0)
        daemon.stop()
    }
}
