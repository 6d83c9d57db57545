import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("JobStore pruning and dependencies")
struct JobStorePruningTests {
    let directory: TemporaryDirectory
    let store: JobStore
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    init() throws {
        directory = try TemporaryDirectory()
        store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
    }

    func spec(after: [JobID] = []) -> JobSpec {
        var spec = JobSpec(command: .argv(["true"]), cwd: "/", environment: [:])
        spec.after = after
        return spec
    }

    /// Runs a queued job to its end with `result`, finishing at `now + offset` seconds.
    func finish(_ id: JobID, _ result: JobResult, offset: TimeInterval) throws {
        try store.claim(id, at: now)
        try store.markFinished(id, result: result, at: now.addingTimeInterval(offset))
    }

    @Test("finished jobs are walked oldest finish first, page by page, each marked when a live job depends on it")
    func walk() throws {
        let jobs = try store.insert([spec(), spec(), spec()], submitterUid: 0, at: now)
        try finish(jobs[2].id, .succeeded, offset: 1)
        try finish(jobs[0].id, .failed(exitCode: 1), offset: 2)
        try finish(jobs[1].id, .succeeded, offset: 3)
        let dependent = try store.insert([(spec(after: [jobs[0].id]), JobState.waiting)], submitterUid: 0, at: now)[0]

        let first = try store.finishedJobs(finishedBefore: nil, after: nil, limit: 2)
        #expect(first.map(\.id) == [jobs[2].id, jobs[0].id])
        #expect(first.map(\.hasLiveDependents) == [false, true])
        #expect(first[1].state == .finished(.failed(exitCode: 1)))
        let second = try store.finishedJobs(finishedBefore: nil, after: first.last, limit: 2)
        #expect(second.map(\.id) == [jobs[1].id])
        #expect(try store.finishedJobs(finishedBefore: now.addingTimeInterval(2), after: nil, limit: 10).map(\.id) == [jobs[2].id])
        #expect(try store.earliestPrunableFinish() == now.addingTimeInterval(1))

        let deleted = try store.deleteFinished([jobs[0].id, jobs[2].id, dependent.id])
        #expect(deleted.map(\.id) == [jobs[2].id], "neither a job a live one depends on nor a live job is deleted")
        #expect(try store.earliestPrunableFinish() == now.addingTimeInterval(3))
    }

    @Test("a dependent keeps naming a pruned dependency, and the dependency reads as missing")
    func prunedDependency() throws {
        let dependency = try store.insert(spec(), submitterUid: 0, at: now)
        try finish(dependency.id, .succeeded, offset: 1)
        let dependent = try store.insert([(spec(after: [dependency.id]), JobState.queued)], submitterUid: 0, at: now)[0]
        try finish(dependent.id, .succeeded, offset: 2)
        #expect(try store.unsucceededDependencies(of: [dependent.id]).isEmpty, "a succeeded dependency does not count")
        #expect(try store.deleteFinished([dependency.id]).count == 1)
        #expect(try store.job(dependent.id)?.after == [dependency.id])
        let missing = try #require(try store.unsucceededDependencies(of: [dependent.id])[dependent.id])
        #expect(missing.count == 1 && missing[0].id == dependency.id && missing[0].state == nil)
    }

    @Test("a retried job is requeued or put back to waiting, keeping its start time, with a requeued event")
    func requeue() throws {
        var delayed = spec()
        delayed.notBefore = now.addingTimeInterval(3600)
        let job = try store.insert([(delayed, JobState.waiting)], submitterUid: 0, at: now)[0]
        try store.markFinished(job.id, result: .cancelled, at: now)
        let waiting = try store.markRequeued(job.id, to: .waiting)
        #expect(waiting.state == .waiting && waiting.spec.notBefore == delayed.notBefore && waiting.maxAttempts == 1)
        let events = try EventLog(database: store.database).events(after: 0, jobID: job.id, limit: 10)
        #expect(events.map(\.kind) == ["submitted", "cancelled", "requeued"])
        #expect(events.last?.result == nil, "a requeue carries no attempt result")
    }

    @Test("a retry keeps the attempts a job still had, and allows one more to a job that used them all")
    func requeueKeepsAttemptsLeft() throws {
        var retried = spec()
        retried.maxAttempts = 4
        let job = try store.insert(retried, submitterUid: 0, at: now)
        _ = try store.claim(job.id, at: now)
        _ = try store.markRetrying(job.id, result: .failed(exitCode: 1), retryAt: now.addingTimeInterval(60), at: now)
        try store.markFinished(job.id, result: .cancelled, at: now)  // cancelled during the backoff
        let again = try store.markRequeued(job.id)
        #expect(again.attempt == 1 && again.maxAttempts == 4)

        let once = try store.insert(spec(), submitterUid: 0, at: now)
        _ = try store.claim(once.id, at: now)
        try store.markFinished(once.id, result: .failed(exitCode: 1), at: now)
        #expect(try store.markRequeued(once.id).maxAttempts == 2)
    }

    @Test("a version 1 database keeps its dependencies through the migration")
    func migrationKeepsDependencies() throws {
        let other = try TemporaryDirectory()
        let database = try Database(path: other.file("orchd.sqlite3"))
        var v1 = Migrator()
        v1.registerMigration("v1-jobs") { db in
            try db.execute(Migrations.v1JobsSQL)
            try db.execute("INSERT INTO durability_barrier (id, commits) VALUES (1, 0)")
        }
        try v1.migrate(database)
        try database.execute("""
            INSERT INTO jobs (queue, argv, cwd, environment, state, submitter_uid, submitted_at) VALUES
                ('default', '["true"]', '/', '{}', 'queued', 0, 0), ('default', '["true"]', '/', '{}', 'waiting', 0, 0);
            INSERT INTO job_dependencies (job_id, depends_on) VALUES (2, 1);
            """)
        let migrated = try JobStore(database: database)
        #expect(try migrated.job(JobID(rawValue: 2))?.after == [JobID(rawValue: 1)])
        #expect(try Migrations.migrator.appliedMigrations(database) == ["v1-jobs", "v2-retry-events-kept-dependencies", "v3-application-id", "v4-environments", "v5-job-counts", "v6-multi-user", "v7-declared-queues-held-suspended", "v8-executors", "v9-unique-key-per-owner", "v10-indexes-end-with-rowid", "v11-barrier-without-write",
            "v12-state-check-without-list", "v13-event-times-after-the-job", "v14-endings", "v15-started-when-the-process-starts",
        ])
    }
}
