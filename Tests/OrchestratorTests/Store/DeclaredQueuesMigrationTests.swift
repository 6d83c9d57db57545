import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Declared queues migration (v7)")
struct DeclaredQueuesMigrationTests {
    @Test("a database from before declared queues keeps every queue that has jobs, finished ones too, and gains default")
    func queuesWithJobsStayDeclared() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.file("orchd.sqlite3"))
        try Migrator.orchd(before: "v7-declared-queues-held-suspended").migrate(database)
        // Before v7 a queue's row was made by its first job; a database may lack them.
        try database.execute("""
            INSERT INTO environments (hash, json) VALUES (0, '{}');
            INSERT INTO jobs (queue, argv, cwd, environment_id, state, submitter_uid, submitted_at) VALUES
                ('work', '["true"]', '/', 1, 'queued', 0, 0);
            INSERT INTO jobs (queue, argv, cwd, environment_id, state, result, exit_code, submitter_uid, submitted_at) VALUES
                ('history', '["true"]', '/', 1, 'finished', 'succeeded', 0, 0, 0);
            DELETE FROM queues;
            """)
        let work = JobID(rawValue: 1)

        let store = try JobStore(database: database)
        #expect(try store.queueSettings().map(\.name.rawValue) == ["default", "history", "work"])
        let migrated = try #require(try store.job(work))
        #expect(!migrated.held && !migrated.suspended && migrated.state == .queued)
    }
}
