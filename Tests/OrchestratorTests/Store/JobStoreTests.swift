import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("JobStore")
struct JobStoreTests {
    let directory: TemporaryDirectory
    let store: JobStore
    let now = Date(timeIntervalSince1970: 1_790_000_000.123456)

    init() throws {
        directory = try TemporaryDirectory()
        store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
    }

    func spec(_ argv: [String] = ["true"], queue: QueueName = .default, priority: Int = 0, name: String? = nil) -> JobSpec {
        JobSpec(command: .argv(argv), cwd: "/tmp", environment: ["PATH": "/usr/bin:/bin"], queue: queue, priority: priority, name: name)
    }

    @Test("an inserted job reads back identical, argv words kept exactly")
    func roundTrip() throws {
        let argv = ["printf", "", "two words", "*", "$HOME", "naïve ☃ 🚀", "'quoted'", "back\\slash", "new\nline", "/a/b"]
        let inserted = try store.insert(
            JobSpec(
                command: .argv(argv), cwd: "/home/ann/My Project",
                environment: ["HOME": "/home/ann", "EMPTY": "", "UNICODE": "ü", "NOTIFY_SOCKET": "/run/x"],
                queue: QueueName(rawValue: "build")!, priority: -3, name: "printing", labels: ["team": "ops", "a": "b"]),
            submitterUid: 1000, at: now)
        #expect(inserted.id.rawValue == 1)
        #expect(inserted.state == .queued && inserted.attempt == 0 && inserted.maxAttempts == 1)
        #expect(inserted.spec.environment["NOTIFY_SOCKET"] == nil)
        let read = try #require(try store.job(inserted.id))
        #expect(read == inserted)
        #expect(read.spec.command == .argv(argv))
        #expect(Timestamp.microseconds(read.submittedAt) == 1_790_000_000_123_456)
    }

    @Test("a shell job reads back as a shell job")
    func shellRoundTrip() throws {
        let inserted = try store.insert(
            JobSpec(command: .shell("echo \"$HOME\" | tr a-z A-Z; exit 3"), cwd: "/", environment: [:]),
            submitterUid: 0, at: now)
        #expect(try store.job(inserted.id) == inserted)
    }

    @Test("a missing job reads as nil")
    func missingJob() throws {
        #expect(try store.job(JobID(rawValue: 42)) == nil)
    }

    @Test("nextQueued returns higher priority first, then submission order")
    func priorityThenFIFO() throws {
        let jobs = try store.insert(
            [spec(priority: 0), spec(priority: 5), spec(priority: 0), spec(priority: 5), spec(priority: -1)],
            submitterUid: 0, at: now)
        let next = try store.nextQueued(in: .default, excluding: [], limit: 10)
        #expect(next.map(\.id) == [jobs[1], jobs[3], jobs[0], jobs[2], jobs[4]].map(\.id))
        #expect(try store.nextQueued(in: .default, excluding: [], limit: 2).map(\.id) == [jobs[1].id, jobs[3].id])
    }

    @Test("nextQueued skips excluded, running, finished and other queues' jobs")
    func nextQueuedFilters() throws {
        let other = QueueName(rawValue: "other")!
        let jobs = try store.insert([spec(), spec(), spec(), spec(), spec(queue: other)], submitterUid: 0, at: now)
        try store.markRunning(jobs[1].id, pid: 100, processStartTicks: 1, bootID: "b", at: now)
        try store.markFinished(jobs[2].id, result: .cancelled, at: now)
        #expect(try store.nextQueued(in: .default, excluding: [jobs[0].id], limit: 10).map(\.id) == [jobs[3].id])
        #expect(try store.nextQueued(in: other, excluding: [], limit: 10).map(\.id) == [jobs[4].id])
    }

    @Test("nextQueued searches the partial index jobs_runnable: no table scan, no sort")
    func nextQueuedUsesIndex() throws {
        let statement = try store.database.makeStatement("EXPLAIN QUERY PLAN " + JobStore.nextQueuedSQL)
        try statement.bind([.text("default"), .text("[1,2]"), 10])
        var details: [String] = []
        while try statement.step() { details.append(statement.string(at: 3) ?? "") }
        #expect(details.contains { $0.hasPrefix("SEARCH jobs USING INDEX jobs_runnable (queue=?)") }, "\(details)")
        #expect(!details.contains { $0.hasPrefix("SCAN jobs") }, "\(details)")
        #expect(!details.contains { $0.contains("TEMP B-TREE") }, "\(details)")
    }

    @Test("a batch insert is one transaction: a failure stores none of it")
    func batchIsAtomic() throws {
        try store.database.execute("""
            CREATE TEMP TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.name = 'bad'
            BEGIN SELECT RAISE(ABORT, 'refused by test'); END
            """)
        #expect(throws: DatabaseError.self) {
            try store.insert([spec(), spec(), spec(name: "bad"), spec()], submitterUid: 0, at: now)
        }
        #expect(try store.jobs().isEmpty)
        let jobs = try store.insert([spec(), spec()], submitterUid: 0, at: now)
        #expect(jobs.map(\.id.rawValue) == [1, 2]) // the rolled-back rows consumed no IDs
    }

    @Test("a batch of every size up to 70 stores each spec under the ID of its place, with its own fields and dependencies")
    func batchRowsKeepTheirOrder() throws {
        let first = try store.insert(spec(name: "first"), submitterUid: 0, at: now)
        var expectedID = first.id.rawValue + 1
        // 70 = 32 + 32 + 4 + 2: several statement sizes and a chunk boundary inside the batch.
        for count in [1, 2, 3, 5, 31, 32, 33, 70] {
            let other = QueueName(rawValue: "q\(count)")!
            let specs = (0..<count).map { index in
                var job = spec(["echo", "\(count)-\(index)"], queue: index % 3 == 0 ? other : .default, priority: index, name: "\(count)-\(index)")
                job.after = index % 4 == 0 ? [first.id] : []
                job.labels = ["index": "\(index)"]
                return job
            }
            let jobs = try store.insert(specs, submitterUid: 7, at: now)
            #expect(jobs.map(\.id.rawValue) == Array(expectedID ..< expectedID + Int64(count)))
            expectedID += Int64(count)
            for (job, spec) in zip(jobs, specs) {
                let read = try #require(try store.job(job.id))
                #expect(read.spec.name == spec.name && read.spec.command == spec.command && read.spec.priority == spec.priority)
                #expect(read.spec.queue == spec.queue && read.spec.labels == spec.labels && read.after == spec.after)
                #expect(read == job)
            }
        }
    }

    @Test("markRunning then markFinished round-trips every JobResult")
    func everyResult() throws {
        let results: [JobResult] = [
            .succeeded, .failed(exitCode: 3), .signaled(signal: 9), .timedOut, .cancelled,
            .spawnFailed(reason: "No such file or directory"), .spawnFailed(reason: ""),
            .dependencyFailed(JobID(rawValue: 1)), .interrupted,
        ]
        let started = now.addingTimeInterval(1)
        let ended = now.addingTimeInterval(2.5)
        for result in results {
            let job = try store.insert(spec(), submitterUid: 1000, at: now)
            let running = try store.markRunning(
                job.id, pid: 4242, processStartTicks: UInt64(Int64.max) + 7, bootID: "0a1b", at: started)
            #expect(running.state == .running && running.attempt == 1 && running.pid == 4242)
            #expect(running.startedAt == Timestamp.date(microseconds: Timestamp.microseconds(started)))
            let record = try #require(try store.runningJobs().first { $0.job.id == job.id })
            #expect(record.processStartTicks == UInt64(Int64.max) + 7 && record.bootID == "0a1b")
            #expect(record.job == running)

            let finished = try store.markFinished(job.id, result: result, at: ended)
            #expect(finished.state == .finished(result))
            #expect(finished.pid == nil && finished.attempt == 1)
            #expect(finished.finishedAt == Timestamp.date(microseconds: Timestamp.microseconds(ended)))
            #expect(try store.job(job.id) == finished)
        }
        #expect(try store.runningJobs().isEmpty)
    }

    @Test("a queued job can be finished without running (cancel before start)")
    func cancelQueued() throws {
        let job = try store.insert(spec(), submitterUid: 0, at: now)
        let cancelled = try store.markFinished(job.id, result: .cancelled, at: now)
        #expect(cancelled.state == .finished(.cancelled) && cancelled.attempt == 0 && cancelled.startedAt == nil)
    }

    @Test("transitions of a missing job or from the wrong state throw clear errors")
    func transitionErrors() throws {
        let missing = JobID(rawValue: 99)
        #expect(throws: JobStoreError.noSuchJob(missing)) { try store.markFinished(missing, result: .succeeded, at: now) }
        #expect(throws: JobStoreError.noSuchJob(missing)) {
            try store.markRunning(missing, pid: 1, processStartTicks: 1, bootID: "b", at: now)
        }
        let job = try store.insert(spec(), submitterUid: 0, at: now)
        try store.markFinished(job.id, result: .succeeded, at: now)
        #expect(throws: JobStoreError.invalidTransition(job.id, from: "finished", to: "finished")) {
            try store.markFinished(job.id, result: .cancelled, at: now)
        }
        #expect(throws: JobStoreError.invalidTransition(job.id, from: "finished", to: "running")) {
            try store.markRunning(job.id, pid: 1, processStartTicks: 1, bootID: "b", at: now)
        }
    }

    @Test("IDs are never reused, even after the newest job is deleted")
    func idsNeverReused() throws {
        let first = try store.insert([spec(), spec(), spec()], submitterUid: 0, at: now)
        try store.database.execute("DELETE FROM jobs")
        let next = try store.insert(spec(), submitterUid: 0, at: now)
        #expect(next.id.rawValue == first.last!.id.rawValue + 1)
    }

    @Test("jobs filters by ids, queue and state, ordered by id, with a limit")
    func listing() throws {
        let other = QueueName(rawValue: "other")!
        let jobs = try store.insert([spec(), spec(queue: other), spec(), spec(queue: other)], submitterUid: 0, at: now)
        try store.markRunning(jobs[2].id, pid: 1, processStartTicks: 1, bootID: "b", at: now)
        #expect(try store.jobs().map(\.id) == jobs.map(\.id))
        #expect(try store.jobs(ids: [jobs[3].id, jobs[0].id]).map(\.id) == [jobs[0].id, jobs[3].id])
        #expect(try store.jobs(ids: []).isEmpty)
        #expect(try store.jobs(queue: other).map(\.id) == [jobs[1].id, jobs[3].id])
        #expect(try store.jobs(stateName: "running").map(\.id) == [jobs[2].id])
        #expect(try store.jobs(queue: .default, stateName: "queued").map(\.id) == [jobs[0].id])
        #expect(try store.jobs(limit: 2).map(\.id) == [jobs[jobs.count - 2].id, jobs[jobs.count - 1].id], "the newest two, in ID order")
        #expect(try store.jobs(stateName: "bogus").isEmpty)
    }

    @Test("counts reports jobs per state")
    func counts() throws {
        let jobs = try store.insert([spec(), spec(), spec(), spec()], submitterUid: 0, at: now)
        try store.markRunning(jobs[0].id, pid: 1, processStartTicks: 1, bootID: "b", at: now)
        try store.markFinished(jobs[1].id, result: .cancelled, at: now)
        #expect(try store.counts() == .init(waiting: 0, queued: 2, running: 1, finished: 1))
    }

    @Test("several store calls inside one write commit together")
    func groupCommit() throws {
        let jobs = try store.insert([spec(), spec()], submitterUid: 0, at: now)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.database.write { _ in
                try store.markFinished(jobs[0].id, result: .cancelled, at: now)
                try store.markFinished(jobs[1].id, result: .cancelled, at: now)
                throw Abort()
            }
        }
        #expect(try store.counts().queued == 2)
    }

    @Test("a damaged row is reported as an error, never a crash")
    func damagedRows() throws {
        let job = try store.insert(spec(), submitterUid: 0, at: now)
        let damages = [
            ("queue", "UPDATE jobs SET queue = '.bad queue'"),
            ("argv", "UPDATE jobs SET argv = '[1, 2]'"),
            ("environment", "UPDATE environments SET json = '{\"A\": {\"nested\": 1}}'"),
            ("result", "UPDATE jobs SET state = 'finished', result = 'exploded'"),
            ("result", "UPDATE jobs SET state = 'finished', result = 'failed', exit_code = NULL"),
            ("exit_code", "UPDATE jobs SET state = 'finished', result = 'failed', exit_code = 'three'"),
            ("pid", "UPDATE jobs SET pid = 99999999999"),
            ("submitter_uid", "UPDATE jobs SET submitter_uid = -1"),
            // Times no four-digit year holds: reading one trapped orchd (SIGILL).
            ("submitted_at", "UPDATE jobs SET submitted_at = 9223372036854775807"),
            ("not_before", "UPDATE jobs SET not_before = -9223372036854775808"),
            ("finished_at", "UPDATE jobs SET state = 'finished', result = 'succeeded', finished_at = 253402300800000000"),
        ]
        for (column, sql) in damages {
            try store.database.execute("SAVEPOINT damage")
            try store.database.execute(sql)
            let error = #expect(throws: JobStoreError.self) { try store.job(job.id) }
            if case .invalidRow(let id, let reported, _) = error {
                #expect(id == job.id.rawValue && reported == column, "\(sql)")
            } else {
                Issue.record("expected invalidRow for \(column), got \(String(describing: error))")
            }
            try store.database.execute("ROLLBACK TO damage; RELEASE damage") // undo it before the next case
        }
    }
}

extension JobStore {
    /// Starts a queued job as the scheduler does, with its production calls: claimed, then its
    /// process recorded; read back.
    @discardableResult
    func markRunning(_ id: JobID, pid: Int32, processStartTicks: UInt64, bootID: String, at: Date) throws -> Job {
        try claim(id, at: at)
        try recordProcessOnly(id, pid: pid, processStartTicks: processStartTicks, bootID: bootID)
        guard let job = try job(id) else { throw JobStoreError.noSuchJob(id) }
        return job
    }
}
