import Foundation
import Glibc
import Orchestrator
import OrchestratorAPI
import Testing
import TestWaitLimits

/// A full file system and a database locked by another process, end to end: requests fail
/// with an error that says so, running jobs go on, and their ends are recorded once the store
/// takes writes again.
@Suite("Storage faults end to end")
struct StorageFaultTests {
    /// A 2 MiB tmpfs mounted for one test; unmounted by ``unmount()``.
    final class SmallFileSystem {
        let path: String
        init() throws {
            var template = Array("/tmp/orchd-full-XXXXXX".utf8CString)
            guard let created = mkdtemp(&template) else { throw TestFailure("mkdtemp: \(errno)") }
            path = String(cString: created)
            let mount = try TestDaemon.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", path])
            guard mount.status == 0 else {
                rmdir(path)
                throw TestFailure(
                    "this test needs a small file system to fill, and cannot mount one (it must run as root, "
                        + "with CAP_SYS_ADMIN, outside a container that forbids mount): mount -t tmpfs -o size=2m tmpfs \(path) "
                        + "exited \(mount.status): \(mount.standardError)")
            }
        }

        /// Writes a file until the file system has no byte left.
        func fill() throws -> String {
            let file = path + "/fill"
            let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw TestFailure("open \(file): \(errno)") }
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0, count: 65_536)
            // Short writes near the end are fine; the loop ends at the first refusal.
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            guard errno == ENOSPC else { throw TestFailure("write \(file): errno \(errno), not ENOSPC") }
            return file
        }

        /// Gives the file system more room, as an admin freeing space would.
        func grow(toMiB size: Int) throws {
            let remount = try TestDaemon.run("/bin/mount", ["-o", "remount,size=\(size)m", path])
            guard remount.status == 0 else { throw TestFailure("remount \(path): \(remount.standardError)") }
        }

        func unmount() {
            _ = try? TestDaemon.run("/bin/umount", [path])
            rmdir(path)
        }
    }

    /// Submits a job that exits with `exitCode` once `gate` (a named pipe) is opened for
    /// writing, and returns when it has started.
    static func startGatedJob(on daemon: TestDaemon, exitCode: Int) throws -> (id: String, gate: String) {
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "echo up > '\(started.path)'; read x < '\(gate)'; exit \(exitCode)"]).line
        #expect(started.read() == "up")
        return (id, gate)
    }

    @Test("a full disk: submit fails naming the state directory, a job ending meanwhile is recorded with its real result once space returns")
    func fullDisk() throws {
        let fileSystem = try SmallFileSystem()
        defer { fileSystem.unmount() }
        let daemon = try TestDaemon(arguments: ["--state-dir", fileSystem.path])
        defer { daemon.stop() }
        let (id, gate) = try Self.startGatedJob(on: daemon, exitCode: 3)

        let filler = try fileSystem.fill()
        let refused = try daemon.orchctl(["submit", "--", "echo", "never stored"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.standardError.hasPrefix(
            "Error: the file system of the state directory \(fileSystem.path) is full ("), "\(refused)")
        #expect(refused.standardError.contains(" bytes free), so nothing was stored; free space there and try again"))

        // The job ends while the disk is full: its end cannot be written yet.
        try release(gate: gate)
        #expect(daemon.waitForLog(containing: "cannot record the end of job \(id) (failed) now"), "\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["status", "--state", "running", "--json"]).standardOutput.contains("\"id\" : \(id)"))

        // Space returns: the end is written with its real result, and submits work again.
        try FileManager.default.removeItem(atPath: filler)
        let waited = try daemon.orchctl(["wait", id, "--timeout", "60s"])
        #expect(waited.status == 3, "\(waited)")
        #expect(try daemon.orchctl(["show", id, "--json"]).standardOutput.contains("\"exitCode\" : 3"))
        let again = try daemon.orchctl(["submit", "--wait", "--", "true"])
        #expect(again.status == 0, "\(again)")
        #expect(!daemon.daemonLog.contains("never stored"))
    }

    @Test("prune on a full disk frees space: the pruned jobs' logs go first, so the delete has room, and the jobs are gone")
    func pruneOnFullDisk() throws {
        let fileSystem = try SmallFileSystem()
        defer { fileSystem.unmount() }
        let daemon = try TestDaemon(arguments: ["--state-dir", fileSystem.path])
        defer { daemon.stop() }
        // A finished job whose log holds most of the room, then the rest filled.
        let id = try daemon.orchctl(["submit", "--wait", "--", "head", "-c", "1000000", "/dev/zero"])
        try #require(id.status == 0, "\(id)")
        _ = try fileSystem.fill()
        let refused = try daemon.orchctl(["submit", "--", "true"])
        try #require(refused.standardError.contains("is full ("), "the disk is not full: \(refused)")

        let pruned = try daemon.orchctl(["prune", "--all"])
        #expect(pruned.status == 0, "\(pruned)\n\(daemon.daemonLog)")
        #expect(pruned.standardOutput.contains("1"), "\(pruned)")
        #expect(try daemon.orchctl(["status", "--state", "finished", "--json"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let logs = try FileManager.default.subpathsOfDirectory(atPath: fileSystem.path + "/logs").filter { $0.hasSuffix(".out") }
        #expect(logs.isEmpty, "\(logs)")
        // The room the log held takes submits again.
        #expect(try daemon.orchctl(["submit", "--", "true"]).status == 0)
    }

    @Test("a write that fails for want of space where SQLite keeps its temporary files, not in the state directory, is not reported as a full state directory")
    func fullTemporaryDirectory() throws {
        let fileSystem = try SmallFileSystem()
        defer { fileSystem.unmount() }
        _ = try fileSystem.fill()
        let daemon = try TestDaemon(environment: ["SQLITE_TMPDIR": fileSystem.path])
        defer { daemon.stop() }
        #expect(try daemon.orchctl(["pause"]).status == 0)
        let padding = String(repeating: "z", count: 4000)
        let batch = try daemon.orchctl(["submit", "--batch", "-"], input: (0..<1500).map { "echo \($0) \(padding)\n" }.joined())
        try #require(batch.status == 0, "\(batch)")
        #expect(try daemon.orchctl(["cancel", "--state", "queued"]).status == 0)
        // One statement that changes more than the statement journal keeps in memory.
        let pruned = try daemon.orchctl(["prune", "--all"])
        #expect(pruned.status == 1, "\(pruned)")
        #expect(pruned.standardError.contains("SQLite's temporary files (in $SQLITE_TMPDIR, else $TMPDIR, else /var/tmp) may be on a full file system"),
                "\(pruned)")
        #expect(!pruned.standardError.contains("is full ("), "\(pruned)")
    }

    @Test("a delayed job whose start comes while the disk is full is queued and run once space returns")
    func delayedStartWhileFull() throws {
        let fileSystem = try SmallFileSystem()
        defer { fileSystem.unmount() }
        let daemon = try TestDaemon(arguments: ["--state-dir", fileSystem.path])
        defer { daemon.stop() }
        let id = try daemon.orchctl(["submit", "--delay", "3s", "--", "true"]).line
        let filler = try fileSystem.fill()
        #expect(daemon.waitForLog(containing: "cannot queue delayed jobs"), "\(daemon.daemonLog)")
        // Space returns: the job is queued without another wake-up or a restart.
        try FileManager.default.removeItem(atPath: filler)
        let waited = try daemon.orchctl(["wait", id, "--timeout", "60s"])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
    }

    @Test("orchd's own WAL filling the disk: once space returns, every queued job runs and nothing is lost")
    func walFillsDisk() throws {
        let fileSystem = try SmallFileSystem()
        defer { fileSystem.unmount() }
        let daemon = try TestDaemon(arguments: ["--state-dir", fileSystem.path])
        defer { daemon.stop() }
        // Batches until a submit is refused: the jobs' rows and their runs fill the WAL, which
        // SQLite neither checkpoints (it does at 1,000 pages, 4 MiB) nor reuses before that.
        // Jobs that write no output: one that cannot write its log fails, rightly.
        let batch = (0..<200).map { _ in "true" }.joined(separator: "\n")
        var accepted = 0
        var refusal = ""
        for _ in 0..<50 {
            let submitted = try daemon.orchctl(["submit", "--batch", "-"], input: batch)
            guard submitted.status == 0 else {
                refusal = submitted.standardError
                break
            }
            accepted += 200
        }
        try #require(refusal.contains("is full"), "the state file system never filled: \(refusal)")
        #expect(accepted > 0)
        #expect(daemon.waitForLog(containing: "keeping the database's WAL small"), "\(daemon.daemonLog)")

        // Space returns (the file system grows by 2 MiB, less than a WAL can grow to).
        try fileSystem.grow(toMiB: 4)
        let waited = try daemon.orchctl(["wait", "--all", "--timeout", "90s"])
        #expect(waited.status == 0, "\(waited.standardError)\n\(daemon.daemonLog.suffix(2000))")
        let jobs = try JSONSerialization.jsonObject(with: Data(daemon.orchctl(["status", "--all", "--json"]).standardOutput.utf8)) as? [[String: Any]] ?? []
        #expect(jobs.count == accepted)
        #expect(jobs.allSatisfy { $0["result"] as? String == "succeeded" }, "every accepted job ran and succeeded")

        // With room again (64 MiB free), the WAL grows as usual: a commit at most once a
        // second looks, so jobs are submitted until one has.
        try fileSystem.grow(toMiB: 100)
        var roomAgain = false
        for _ in 0..<200 where !roomAgain {
            #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
            roomAgain = daemon.daemonLog.contains("has room again: the database's WAL grows as usual")
        }
        #expect(roomAgain, "\(daemon.daemonLog.suffix(2000))")
    }

    @Test("a database locked by another process past the busy timeout: a clear error, and nothing is lost")
    func lockedDatabase() throws {
        let daemon = try TestDaemon()
        let (id, gate) = try Self.startGatedJob(on: daemon, exitCode: 4)

        // Another process (here: another connection) takes the write lock and keeps it.
        let holder = try Database(path: daemon.stateDirectory + "/orchd.db")
        try holder.execute("BEGIN IMMEDIATE")
        let refused = try daemon.orchctl(["submit", "--", "true"])
        #expect(refused.status == 1, "\(refused)")
        // orchctl called again for 5 s, said so once, then gave up with orchd's message.
        #expect(refused.standardError.hasPrefix(
            "orchctl: \(daemon.stateDirectory)/orchd.db is locked by another process; trying again for up to 5s...\n"
                + "Error: the job database \(daemon.stateDirectory)/orchd.db is locked by another process"), "\(refused)")
        try release(gate: gate)
        #expect(daemon.waitForLog(containing: "cannot record the end of job \(id) (failed) now"), "\(daemon.daemonLog)")

        try holder.execute("ROLLBACK")
        let waited = try daemon.orchctl(["wait", id, "--timeout", "60s"])
        #expect(waited.status == 4, "\(waited)")
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
    }

    @Test("a job that ends while a request waits for the locked database has its end kept at once, not after the request: after kill -9 it is recorded succeeded and not run again")
    func endWhileRequestWaitsForLock() throws {
        let daemon = try TestDaemon()
        defer { daemon.stop() }
        let (id, gate, runs) = try Self.startCountedJob(on: daemon)
        let holder = try Database(path: daemon.stateDirectory + "/orchd.db")
        try holder.execute("BEGIN IMMEDIATE")
        // The submit waits for the lock: orchctl calls again, and says so after a second. orchd
        // used to wait the whole 5 s on its control queue instead, the job's end behind it.
        let submit = try OrchctlStream(daemon, ["submit", "--", "true"], captureErrors: true)
        defer { submit.stop() }
        let note = submit.nextErrorLine(timeout: 60)
        #expect(note == "orchctl: \(daemon.stateDirectory)/orchd.db is locked by another process; trying again for up to 5s...", "\(String(describing: note))")
        try release(gate: gate)
        #expect(daemon.waitForLog(containing: "cannot record the end of job \(id) (succeeded) now"), "\(daemon.daemonLog)")
        #expect(submit.process.isRunning, "the end was kept while the submit still waited, not after it")
        daemon.crash()
        #expect(submit.exitStatus() == 69, "orchd went away before answering")
        try holder.execute("ROLLBACK")
        try daemon.start()

        let waited = try daemon.orchctl(["wait", id, "--timeout", "60s"])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
        let shown = try daemon.orchctl(["show", id, "--json"]).standardOutput
        #expect(shown.contains("\"attempt\" : 1"), "\(shown)")
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "run\n", "the job ran once")
    }

    @Test("a cancel of a running and a queued job under a lock says the running one was cancelled and the rest refused, and is not sent again as if nothing had changed")
    func partlyCancelledUnderLock() throws {
        let daemon = try TestDaemon(concurrency: 1)
        defer { daemon.stop() }
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let running = try daemon.orchctl(["submit", "--", "sh", "-c", "echo up > '\(started.path)'; exec sleep 600"]).line
        #expect(started.read() == "up")
        let queued = try daemon.orchctl(["submit", "--", "true"]).line
        let holder = try Database(path: daemon.stateDirectory + "/orchd.db")
        try holder.execute("BEGIN IMMEDIATE")
        let cancel = try daemon.orchctl(["cancel", running, queued])
        #expect(cancel.status == 1, "\(cancel)")
        #expect(cancel.standardError.hasPrefix(
            "Error: job \(running) was cancelled (a running job's processes are being stopped) before the store refused the rest: the job database"),
            "\(cancel)")
        #expect(!cancel.standardError.contains("trying again"), "a cancel is not made again: \(cancel)")
        try holder.execute("ROLLBACK")
        #expect(try daemon.orchctl(["wait", running, "--timeout", "60s"]).line == "\(running) cancelled")
        // Not cancelled: it runs in the slot the cancelled one freed.
        #expect(try daemon.orchctl(["wait", queued, "--timeout", "60s"]).line == "\(queued) succeeded")
    }

    /// Submits a job with retries left that counts its runs in a file and exits 0 once `gate`
    /// is opened for writing; returns when it has started, with the file's path.
    static func startCountedJob(on daemon: TestDaemon) throws -> (id: String, gate: String, runs: String) {
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let gate = daemon.directory + "/gate"
        let runs = daemon.directory + "/runs"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl([
            "submit", "--retries", "2", "--", "sh", "-c", "echo run >> '\(runs)'; echo up > '\(started.path)'; read x < '\(gate)'; exit 0",
        ]).line
        #expect(started.read() == "up")
        return (id, gate, runs)
    }

    /// How the store refuses a write in a test: another process holds its write lock, or its
    /// file system is full.
    enum StoreFault: String, CaseIterable, Sendable {
        case lockedDatabase, fullDisk
    }

    @Test("an end kept while the store refuses it survives kill -9: the restart records the real result, and the job is not run again",
          arguments: StoreFault.allCases)
    func keptEndSurvivesCrash(fault: StoreFault) throws {
        let fileSystem = fault == .fullDisk ? try SmallFileSystem() : nil
        defer { fileSystem?.unmount() }
        let daemon = try TestDaemon(arguments: fileSystem.map { ["--state-dir", $0.path] } ?? [])
        defer { daemon.stop() }
        let (id, gate, runs) = try Self.startCountedJob(on: daemon)
        // The fault, and how it goes once orchd is down.
        let clear: () throws -> Void
        if let fileSystem {
            let filler = try fileSystem.fill()
            clear = { try FileManager.default.removeItem(atPath: filler) }
        } else {
            let holder = try Database(path: daemon.stateDirectory + "/orchd.db")
            try holder.execute("BEGIN IMMEDIATE")
            clear = { try holder.execute("ROLLBACK") }
        }
        try release(gate: gate)
        #expect(daemon.waitForLog(containing: "cannot record the end of job \(id) (succeeded) now"), "\(daemon.daemonLog)")
        daemon.crash()
        try clear()
        try daemon.start()

        let waited = try daemon.orchctl(["wait", id, "--timeout", "60s"])
        #expect(waited.status == 0, "\(waited)\n\(daemon.daemonLog)")
        let shown = try daemon.orchctl(["show", id, "--json"]).standardOutput
        #expect(shown.contains("\"result\" : \"succeeded\""), "\(shown)")
        #expect(shown.contains("\"attempt\" : 1"), "\(shown)")
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "run\n", "the job ran once")
        #expect(daemon.daemonLog.contains("job \(id) had ended as succeeded (kept in held-ends"), "\(daemon.daemonLog)")
    }

    @Test("a cancel whose result the locked database refuses keeps it in held-ends before the teardown ends: after kill -9 during the grace, the job is cancelled and not run again")
    func keptCancelSurvivesCrash() throws {
        let daemon = try TestDaemon()
        defer { daemon.stop() }
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let runs = daemon.directory + "/runs"
        // It ignores SIGTERM: the teardown lasts the whole kill grace (2 s).
        let id = try daemon.orchctl([
            "submit", "--retries", "2", "--", "sh", "-c", "trap '' TERM; echo run >> '\(runs)'; echo up > '\(started.path)'; while :; do sleep 0.1; done",
        ]).line
        #expect(started.read() == "up")
        let holder = try Database(path: daemon.stateDirectory + "/orchd.db")
        try holder.execute("BEGIN IMMEDIATE")
        let cancel = try OrchctlStream(daemon, ["cancel", id], captureErrors: true)
        defer { cancel.stop() }
        #expect(daemon.waitForLog(containing: "job \(id): cannot store its result (cancelled) ahead of its end"), "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("kept in held-ends"), "\(daemon.daemonLog)")
        daemon.crash()
        try holder.execute("ROLLBACK")
        try daemon.start()

        let waited = try daemon.orchctl(["wait", id, "--timeout", "60s"])
        #expect(waited.line == "\(id) cancelled", "\(waited)\n\(daemon.daemonLog)")
        #expect(try String(contentsOfFile: runs, encoding: .utf8) == "run\n", "the job ran once")
        #expect(daemon.daemonLog.contains("job \(id) had ended as cancelled (kept in held-ends"), "\(daemon.daemonLog)")
    }

    @Test("a cancel while the disk is full answers once the jobs' processes are gone, naming the ends it keeps; a job whose end is kept already does not stop the others being cancelled")
    func cancelWhileFull() throws {
        let fileSystem = try SmallFileSystem()
        defer { fileSystem.unmount() }
        let daemon = try TestDaemon(arguments: ["--state-dir", fileSystem.path])
        defer { daemon.stop() }
        var jobs: [(id: String, pid: String)] = []
        for name in ["a", "b"] {
            let started = try ReadyMarker(path: daemon.directory + "/started-" + name)
            let id = try daemon.orchctl(["submit", "--", "sh", "-c", "echo $$ > '\(started.path)'; exec sleep 1000"]).line
            jobs.append((id, try #require(started.read())))
        }
        let filler = try fileSystem.fill()
        let first = try daemon.orchctl(["cancel", jobs[0].id])
        #expect(first.status == 1, "\(first)")
        #expect(first.standardError.contains(
            "job \(jobs[0].id) ended (cancelled), but its end cannot be recorded now: the file system of the state directory \(fileSystem.path) is full"),
            "\(first)")
        // The first job's end is kept: the second is cancelled all the same, and both named.
        let both = try daemon.orchctl(["--json", "cancel", jobs[0].id, jobs[1].id])
        #expect(both.status == 1, "\(both)")
        #expect(both.standardOutput.isEmpty, "no list of jobs, not even [], for a call refused whole: \(both)")
        #expect(both.standardError.contains("jobs \(jobs[0].id) (cancelled), \(jobs[1].id) (cancelled) ended, but their ends cannot be recorded now"),
                "\(both)")
        #expect(kill(pid_t(jobs[1].pid) ?? 0, 0) != 0, "the second job's process is gone")

        try FileManager.default.removeItem(atPath: filler)
        for job in jobs {
            _ = try daemon.orchctl(["wait", job.id, "--timeout", "60s"])
            #expect(try daemon.orchctl(["show", job.id, "--json"]).standardOutput.contains("\"result\" : \"cancelled\""))
        }
    }

    @Test("a cancel of a job whose end is kept in memory never replaces the real result")
    func cancelAfterKeptEnd() throws {
        let fileSystem = try SmallFileSystem()
        defer { fileSystem.unmount() }
        let daemon = try TestDaemon(arguments: ["--state-dir", fileSystem.path])
        defer { daemon.stop() }
        let (id, gate) = try Self.startGatedJob(on: daemon, exitCode: 5)

        let filler = try fileSystem.fill()
        try release(gate: gate)
        #expect(daemon.waitForLog(containing: "cannot record the end of job \(id) (failed) now"), "\(daemon.daemonLog)")
        // Space returns, but the kept end waits for its retry timer (a second or more): the
        // store still says running although the process is gone. A cancel now must write
        // the real end first and then find the job finished.
        try FileManager.default.removeItem(atPath: filler)
        let cancelled = try daemon.orchctl(["cancel", id])
        #expect(cancelled.status == 1, "\(cancelled)")
        #expect(cancelled.standardError.contains("already finished"), "\(cancelled)")
        let waited = try daemon.orchctl(["wait", id, "--timeout", "60s"])
        #expect(waited.status == 5, "\(waited)")
        #expect(try daemon.orchctl(["show", id, "--json"]).standardOutput.contains("\"exitCode\" : 5"))
    }

    /// Starts orchd on `stateDirectory` expecting it to refuse, and returns what it said.
    private func refusedStart(_ stateDirectory: String, socket: String) throws -> CommandResult {
        try TestDaemon.run(
            Binaries.orchd, ["--state-dir", stateDirectory, "--socket", socket, "--config", "/dev/null"])
    }

    @Test("orchd refuses another program's database in one line and leaves every byte of it as it was")
    func foreignDatabase() throws {
        let daemon = try TestDaemon()
        daemon.stop()
        let other = daemon.directory + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        let path = other + "/orchd.db"
        do {
            let db = try Database(path: path)
            try db.execute("CREATE TABLE invoices (number INTEGER, total REAL); INSERT INTO invoices VALUES (1, 9.5)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try refusedStart(other, socket: daemon.directory + "/other.sock")
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains(
            "orchd: error: \(path) is an SQLite database of another program (tables: invoices), not orchd's, so orchd leaves it alone; move it away, or give orchd another --state-dir\n"),
            "\(result)")
        #expect(!result.standardError.contains("CREATE TABLE"), "no schema dump")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("a stray -wal from another program never reaches orchd's database: orchd refuses, naming the -wal, and every byte and job stays")
    func foreignWAL() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--", "true"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(daemon.stop() == 0)
        let path = daemon.stateDirectory + "/orchd.db"
        // Every page into the file, the -wal gone: what was committed is all in orchd.db.
        try Database(path: path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        // Another program's WAL database, its -wal taken before its close checkpoints it.
        let foreign = daemon.directory + "/foreign.db"
        do {
            let db = try Database(path: foreign)
            try db.execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE secrets (value TEXT); INSERT INTO secrets VALUES ('hunter2')")
            try FileManager.default.copyItem(atPath: foreign + "-wal", toPath: path + "-wal")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try refusedStart(daemon.stateDirectory, socket: daemon.socketPath)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("orchd: error: \(path)-wal is not the write-ahead log of \(path) ("), "\(result)")
        #expect(result.standardError.contains("move \(path)-wal (and \(path)-shm) away"), "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        // Moved away as the message says: orchd starts with its job.
        try FileManager.default.removeItem(atPath: path + "-wal")
        try daemon.start()
        #expect(try daemon.orchctl(["show", id, "--json"]).standardOutput.contains("succeeded"))
    }

    @Test("a -wal without its database is refused and kept; no database is created")
    func walWithoutDatabase() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["submit", "--", "true"]).status == 0)
        daemon.crash()  // its -wal holds what was committed
        let other = daemon.directory + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        let path = other + "/orchd.db"
        try FileManager.default.copyItem(atPath: daemon.stateDirectory + "/orchd.db-wal", toPath: path + "-wal")
        let wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let result = try refusedStart(other, socket: daemon.directory + "/other.sock")
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("orchd: error: \(path)-wal exists without its database \(path) (missing)"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == wal)
    }

    @Test("orchd refuses a damaged database of its own with the way to recover it")
    func damagedDatabase() throws {
        let daemon = try TestDaemon()
        let batch = (1...2_000).map { "echo job \($0) \(String(repeating: "x", count: 200))" }.joined(separator: "\n")
        // Paused, so that the jobs stay queued and the file keeps its size.
        #expect(try daemon.orchctl(["pause"]).status == 0)
        #expect(try daemon.orchctl(["submit", "--batch", "-"], input: batch).status == 0)
        #expect(daemon.stop() == 0)
        let path = daemon.stateDirectory + "/orchd.db"
        // Every page into the file first: a page whose newer copy is still in the WAL would
        // hide the damage (the file is small now that environments are stored once).
        try Database(path: path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // Overwrite pages in the middle of the file, as a bad disk or a stray write would.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: (size / 2 / 4096) * 4096)
        handle.write(Data((0..<16_384).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }))
        try handle.close()

        let result = try refusedStart(daemon.stateDirectory, socket: daemon.socketPath)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("orchd: error: \(path) is damaged ("), "\(result)")
        #expect(result.standardError.contains("sqlite3 \(path) .dump | sed '$s/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 \(path).recovered"), "\(result)")
    }

    @Test("an fdatasync that fails ends orchd with status 74 before it answers: the client is told the job may be stored, and a restart recovers what is on disk")
    func failedSync() throws {
        let shim = try FailingSyncShim()
        let daemon = try TestDaemon(environment: shim.environment)
        defer { daemon.stop() }
        // Waited for: its end's barrier has finished, so the next barrier is the next submit's.
        let first = try daemon.orchctl(["submit", "--wait", "--", "true"])
        #expect(first.status == 0, "\(first)")

        try shim.failFromNow()
        let second = try daemon.orchctl(["submit", "--", "true"])
        #expect(second.status == 69, "\(second)")
        #expect(second.standardOutput == "", "no ID: the submit was never acknowledged")
        #expect(second.standardError.contains("closed the connection before answering"), "\(second)")
        #expect(second.standardError.contains("check 'orchctl status' before trying again"), "\(second)")
        let process = try #require(daemon.process)
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == Scheduler.durabilityLostExitStatus)
        #expect(daemon.daemonLog.contains("error: cannot sync the job database to disk: Input/output error"), "\(daemon.daemonLog)")
        #expect(daemon.notify.waitFor("ERRNO=5") != nil, "systemd is told why")

        // Restarted, as systemd would: the acknowledged job is there; the other is there or not,
        // as the disk kept it, and is never run twice.
        try shim.stopFailing()
        try daemon.start()
        let shown = try daemon.orchctl(["show", first.line])
        #expect(shown.status == 0, "\(shown)")
        let status = try daemon.orchctl(["status"])
        #expect(status.status == 0, "\(status)")
    }

    @Test("an fsync of SQLite's own checkpoint that fails ends orchd with status 74: the barrier after it acknowledges nothing")
    func failedCheckpointSync() throws {
        let shim = try FailingSyncShim()
        let daemon = try TestDaemon(environment: shim.environment)
        defer { daemon.stop() }
        _ = try daemon.orchctl(["pause"])
        // About 5 MB of jobs: SQLite checkpoints once the WAL holds 1,000 pages (4 MiB).
        let lines = (1...8_000).map { "echo \($0) " + String(repeating: "x", count: 300) }
        let file = daemon.directory + "/jobs.txt"
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        try shim.failWritersFromNow()
        let batch = try daemon.orchctl(["submit", "--batch", file])
        #expect(batch.status != 0, "\(batch.standardError)")
        let acknowledged = batch.standardOutput.split(separator: "\n").count
        #expect(acknowledged < 8_000, "the chunk whose commit checkpointed was not acknowledged")
        let process = try #require(daemon.process)
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == Scheduler.durabilityLostExitStatus, "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("a checkpoint could not sync the database to disk"), "\(daemon.daemonLog)")

        // Restarted: every acknowledged job is there.
        try shim.stopFailing()
        try daemon.start()
        if acknowledged > 0 {
            let last = batch.standardOutput.split(separator: "\n")[acknowledged - 1]
            let shown = try daemon.orchctl(["show", String(last)])
            #expect(shown.status == 0, "\(shown)")
        }
    }

    @Test("a checkpoint at a clean stop whose fsync fails ends orchd with status 74, its WAL kept for the next start")
    func failedCheckpointAtStop() throws {
        let shim = try FailingSyncShim()
        let daemon = try TestDaemon(environment: shim.environment)
        defer { daemon.stop() }
        let submitted = try daemon.orchctl(["submit", "--delay", "1h", "--", "true"])
        #expect(submitted.status == 0, "\(submitted)")
        try shim.failWritersFromNow()
        #expect(daemon.stop() == Scheduler.durabilityLostExitStatus, "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("a checkpoint could not sync the database to disk"), "\(daemon.daemonLog)")
        #expect(FileManager.default.fileExists(atPath: daemon.stateDirectory + "/orchd.db-wal"), "the WAL is kept")

        try shim.stopFailing()
        try daemon.start()
        let shown = try daemon.orchctl(["show", submitted.line])
        #expect(shown.status == 0, "the acknowledged job is there: \(shown)")
    }

    @Test("a WAL file removed while orchd runs ends it with status 74 at the next barrier: nothing written after is acknowledged")
    func walRemoved() throws {
        let daemon = try TestDaemon()
        defer { daemon.stop() }
        let first = try daemon.orchctl(["submit", "--delay", "1h", "--", "true"])
        #expect(first.status == 0, "\(first)")
        try FileManager.default.removeItem(atPath: daemon.stateDirectory + "/orchd.db-wal")
        let second = try daemon.orchctl(["submit", "--delay", "1h", "--", "true"])
        #expect(second.status == 69, "\(second)")
        #expect(second.standardOutput == "", "no ID")
        let process = try #require(daemon.process)
        #expect(process.waitUntilExit(atMost: TestDaemon.commandTimeLimit), "orchd did not exit")
        #expect(process.terminationStatus == Scheduler.durabilityLostExitStatus, "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("-wal: No such file or directory"), "\(daemon.daemonLog)")
    }
}
