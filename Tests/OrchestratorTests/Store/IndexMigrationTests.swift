import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Indexes that end with the rowid (v10)")
struct IndexMigrationTests {
    /// A database migrated up to, not including, v10.
    private static func databaseBeforeV10(_ directory: TemporaryDirectory) throws -> Database {
        let database = try Database(path: directory.file("orchd.sqlite3"))
        try Migrator.orchd(before: "v10-indexes-end-with-rowid").migrate(database)
        return database
    }

    private static func column(_ db: Database, _ sql: String) throws -> [String] {
        let statement = try db.makeStatement(sql)
        var values: [String] = []
        while try statement.step() { values.append(statement.string(at: 0) ?? "NULL") }
        return values
    }

    /// Every query's answer that the rebuilt indexes serve, as text.
    private static func answers(_ db: Database) throws -> [[String]] {
        try [
            "SELECT id FROM jobs WHERE state = 'queued' AND queue = 'default' ORDER BY priority DESC, id",
            "SELECT id FROM jobs WHERE state = 'queued' AND queue = 'default' AND submitter_uid = 1000 ORDER BY priority DESC, id",
            "SELECT id FROM jobs WHERE state = 'queued' ORDER BY id",
            "SELECT id FROM jobs WHERE queue = 'other' AND id > 1 ORDER BY id",
            "SELECT seq || ' ' || kind FROM events WHERE job_id = 2 ORDER BY seq",
            """
            SELECT id || name || queue || priority || argv || cwd || environment_id || labels || state || submitter_uid \
            || submitted_at || max_attempts || coalesce(not_before, '-') || coalesce(unique_key, '-') FROM jobs ORDER BY id
            """,
        ].map { try column(db, $0) }
    }

    @Test("an older database's jobs and events keep their values and their order through the migration")
    func valuesKept() throws {
        let directory = try TemporaryDirectory()
        let database = try Self.databaseBeforeV10(directory)
        try database.execute("""
            INSERT INTO queues (name) VALUES ('other');
            INSERT INTO environments (hash, json) VALUES (0, '{"A":"1"}');
            INSERT INTO jobs (name, queue, priority, argv, cwd, environment_id, labels, state, submitter_uid, submitted_at, \
                max_attempts, not_before, unique_key) VALUES
                ('a', 'default', 0, '["true"]', '/tmp', 1, '{}', 'queued', 0, 10, 1, NULL, NULL),
                ('b', 'default', 5, '["true"]', '/srv', 1, '{"k":"v"}', 'queued', 1000, 11, 3, NULL, 'nightly'),
                ('c', 'other', 0, '["true"]', '/', 1, '{}', 'waiting', 1000, 12, 1, 99, NULL),
                ('d', 'default', 5, '["true"]', '/', 1, '{}', 'queued', 1000, 13, 1, NULL, NULL),
                ('e', 'other', 0, '["true"]', '/', 1, '{}', 'queued', 0, 14, 1, NULL, NULL);
            UPDATE jobs SET state = 'queued' WHERE id = 3;
            UPDATE jobs SET state = 'queued' WHERE id = 2;
            """)
        let before = try Self.answers(database)

        let store = try JobStore(database: database)
        #expect(try Self.answers(database) == before)
        #expect(before[0] == ["2", "4", "1"] && before[1] == ["2", "4"])
        let b = try #require(try store.job(JobID(rawValue: 2)))
        #expect(b.spec.name == "b" && b.spec.priority == 5 && b.spec.labels == ["k": "v"] && b.spec.cwd == "/srv")
        #expect(b.spec.environment == ["A": "1"] && b.state == .queued)
        #expect(try EventLog(database: database).events(after: 0, jobID: JobID(rawValue: 2), limit: 10).map(\.kind.rawValue)
                == ["submitted"])
        #expect(try Self.column(database, "SELECT name FROM pragma_index_info('jobs_runnable')") == ["queue", "priority"])
        #expect(try Self.column(database, "SELECT name FROM pragma_index_info('events_by_job')") == ["job_id"])
    }

    @Test("each query of an ID range or in ID order searches an index: no table scan, no sort")
    func plans() throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        let queries = [
            "SELECT id FROM jobs WHERE state = ?1 AND id > ?2 AND id <= ?3 ORDER BY id LIMIT 10",
            "SELECT id FROM jobs WHERE queue = ?1 AND id > ?2 AND id <= ?3 ORDER BY id LIMIT 10",
            "SELECT id FROM jobs WHERE state = ?1 AND id <= ?2 ORDER BY id DESC LIMIT 1 OFFSET 5",
            "SELECT id FROM jobs WHERE state = 'running' ORDER BY id",
            JobStore.claimCandidatesSQL,
            JobStore.ownerCandidatesSQL,
            "SELECT e.seq FROM events e WHERE e.seq > ?1 AND e.seq <= ?2 AND e.job_id = ?3 ORDER BY e.seq LIMIT 10",
        ]
        for query in queries {
            let plan = try explain(store.database, query)
            #expect(plan.contains { $0.hasPrefix("SEARCH jobs USING") || $0.hasPrefix("SEARCH e USING") }, "\(query): \(plan)")
            #expect(!plan.contains { $0.hasPrefix("SCAN jobs") || $0.hasPrefix("SCAN e") }, "\(query): \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(query): \(plan)")
        }
    }

    private func explain(_ db: Database, _ sql: String) throws -> [String] {
        let statement = try db.makeStatement("EXPLAIN QUERY PLAN " + sql)
        var details: [String] = []
        while try statement.step() { details.append(statement.string(at: 3) ?? "") }
        return details
    }
}
