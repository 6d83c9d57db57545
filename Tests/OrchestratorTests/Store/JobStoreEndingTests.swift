import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

/// Endings: results stored ahead of an attempt's end (``JobStore/recordEnding(_:_:replacing:final:)``).
extension JobStoreTests {
    func runningJob() throws -> JobID {
        let job = try store.insert(JobSpec(command: .argv(["true"]), cwd: "/tmp", environment: [:], maxAttempts: 3), submitterUid: 0, at: now)
        return try store.markRunning(job.id, pid: 100, processStartTicks: 1, bootID: "b", at: now).id
    }

    @Test("a database of the previous schema upgrades in place: its running job keeps its row, with no ending until one is stored")
    func endingMigration() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.file("orchd.sqlite3"))
        try Migrator.orchd(before: "v14-endings").migrate(database)
        try database.execute("""
            INSERT INTO environments (hash, json) VALUES (0, '{}');
            INSERT INTO jobs (queue, argv, cwd, environment_id, state, attempt, submitter_uid, submitted_at, started_at, pid)
                VALUES ('default', '["true"]', '/', 1, 'running', 1, 0, 1, 2, 4242);
            """)
        let upgraded = try JobStore(database: database)
        let running = try upgraded.runningJobs()
        #expect(running.map(\.job.pid) == [4242])
        #expect(try upgraded.endings().isEmpty)
        let id = try #require(running.first?.job.id)
        try upgraded.recordEnding(id, .failed(exitCode: 7))
        #expect(try upgraded.endings() == [id: .init(result: .failed(exitCode: 7))])
    }

    @Test("each result a running attempt may end with reads back as stored; the others are not stored", arguments: [
        JobResult.succeeded, .failed(exitCode: 3), .failed(exitCode: 255), .signaled(signal: 9), .cancelled, .timedOut,
    ])
    func endingRoundTrip(result: JobResult) throws {
        let id = try runningJob()
        try store.recordEnding(id, result)
        #expect(try store.endings() == [id: .init(result: result)])
        #expect(JobStore.ending(from: try #require(JobStore.endingText(result))) == result)
    }

    @Test("interrupted, spawn_failed and dependency_failed are not endings; unreadable text is none")
    func notEndings() throws {
        let id = try runningJob()
        for result in [JobResult.interrupted, .spawnFailed(reason: "x"), .dependencyFailed(JobID(rawValue: 1))] {
            #expect(JobStore.endingText(result) == nil)
            try store.recordEnding(id, result)
        }
        #expect(try store.endings().isEmpty)
        for text in ["", "failed", "failed:", "failed:x", "succeeded:0", "signaled:99999999999", "interrupted", "Succeeded"] {
            #expect(JobStore.ending(from: text) == nil, "\(text)")
        }
    }

    @Test("the first ending stays (a cancel after the main process's result does not replace it); none for a job not running; the next claim clears it")
    func firstStaysAndClaimClears() throws {
        let id = try runningJob()
        try store.recordEnding(id, .succeeded)
        try store.recordEnding(id, .cancelled)
        #expect(try store.endings() == [id: .init(result: .succeeded)])
        // The main process's own result replaces a cancel stored a moment before its exit.
        try store.recordEnding(id, .cancelled, replacing: true)
        try store.recordEnding(id, .failed(exitCode: 2), replacing: true)
        #expect(try store.endings() == [id: .init(result: .failed(exitCode: 2))])

        // A cancel's mark stays when the main process's result replaces the ending, and a
        // later ending adds nothing to it.
        try store.recordEnding(id, .cancelled, final: true)
        #expect(try store.endings() == [id: .init(result: .failed(exitCode: 2), isFinal: true)])
        try store.recordEnding(id, .succeeded, replacing: true)
        try store.recordEnding(id, .cancelled, final: true)
        #expect(try store.endings() == [id: .init(result: .succeeded, isFinal: true)])

        let queued = try store.insert(JobSpec(command: .argv(["true"]), cwd: "/tmp", environment: [:]), submitterUid: 0, at: now)
        try store.recordEnding(queued.id, .cancelled)
        #expect(try store.endings()[queued.id] == nil)

        // The attempt ends with a retry; the next attempt starts with no ending.
        try store.markRetrying(id, result: .failed(exitCode: 1), retryAt: now, at: now)
        _ = try store.database.write { db in try db.execute("UPDATE jobs SET state = 'queued' WHERE id = \(id.rawValue)") }
        try store.markRunning(id, pid: 101, processStartTicks: 2, bootID: "b", at: now)
        #expect(try store.endings().isEmpty)
    }
}
