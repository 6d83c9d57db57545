import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("State events never dated before their job's times (v13)")
struct EventTimeMigrationTests {
    /// The `at` of each event of job `id`, by kind, in order.
    private static func eventTimes(_ db: Database, job id: Int64) throws -> [(kind: String, at: Int64)] {
        let statement = try db.makeStatement("SELECT kind, at FROM events WHERE job_id = \(id) ORDER BY seq")
        var times: [(kind: String, at: Int64)] = []
        while try statement.step() { times.append((statement.string(at: 0) ?? "", statement.int64(at: 1))) }
        return times
    }

    @Test("an upgraded database dates a job's events no earlier than its submit and its start, to the microsecond")
    func eventsFollowTheJob() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.file("orchd.sqlite3"))
        try Migrator.orchd(before: "v13-event-times-after-the-job").migrate(database)
        // Times an hour ahead of the clock: `julianday('now')` alone would date the events before them.
        let submitted = Timestamp.microseconds(Date()) + 3_600_000_000 + 123
        let started = submitted + 7
        try database.execute("""
            INSERT INTO environments (hash, json) VALUES (0, '{}');
            INSERT INTO jobs (queue, argv, cwd, environment_id, state, submitter_uid, submitted_at)
                VALUES ('default', '["true"]', '/', 1, 'queued', 0, \(submitted));
            """)
        // Up to v13's trigger, which still wrote `started` at the claim (v15 writes it at the spawn).
        try Migrator.orchd(before: "v15-started-when-the-process-starts").migrate(database)
        try database.execute("UPDATE jobs SET state = 'running', attempt = 1, started_at = \(started) WHERE id = 1")
        try database.execute("UPDATE jobs SET state = 'finished', result = 'succeeded', exit_code = 0, finished_at = \(started + 1) WHERE id = 1")
        let times = try Self.eventTimes(database, job: 1)
        #expect(times.map(\.kind) == ["submitted", "started", "finished"])
        #expect(times.map(\.at) == [submitted, started, started], "\(times)")

        // Times in the past: the clock's time, as before.
        let before = Timestamp.microseconds(Date()) - 1_000
        try database.execute("""
            INSERT INTO jobs (queue, argv, cwd, environment_id, state, submitter_uid, submitted_at)
                VALUES ('default', '["true"]', '/', 1, 'queued', 0, 1000);
            UPDATE jobs SET state = 'running', attempt = 1, started_at = 2000 WHERE id = 2;
            """)
        let past = try Self.eventTimes(database, job: 2)
        #expect(past.count == 2 && past[1].at >= before, "\(past)")
        #expect(try Migrations.migrator.appliedMigrations(database).contains("v13-event-times-after-the-job"))
    }
}
