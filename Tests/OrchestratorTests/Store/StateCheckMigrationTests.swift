import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("The state CHECK without an IN list (v12)")
struct StateCheckMigrationTests {
    /// A database migrated up to, not including, v12, with a job in each state.
    private static func databaseBeforeV12(_ directory: TemporaryDirectory) throws -> Database {
        let database = try Database(path: directory.file("orchd.sqlite3"))
        try Migrator.orchd(before: "v12-state-check-without-list").migrate(database)
        try database.execute("""
            INSERT INTO environments (hash, json) VALUES (0, '{}');
            INSERT INTO jobs (queue, argv, cwd, environment_id, state, result, submitter_uid, submitted_at) VALUES
                ('default', '["true"]', '/', 1, 'waiting', NULL, 0, 1),
                ('default', '["true"]', '/', 1, 'queued', NULL, 0, 2),
                ('default', '["true"]', '/', 1, 'running', NULL, 0, 3),
                ('default', '["true"]', '/', 1, 'finished', 'succeeded', 0, 4);
            """)
        return database
    }

    private static func text(_ db: Database, _ sql: String, column: Int = 0) throws -> [String] {
        let statement = try db.makeStatement(sql)
        var values: [String] = []
        while try statement.step() { values.append(statement.string(at: column) ?? "NULL") }
        return values
    }

    /// The opcodes SQLite compiles `sql` to (EXPLAIN's second column).
    private static func opcodes(_ db: Database, _ sql: String) throws -> [String] {
        try text(db, "EXPLAIN \(sql)", column: 1)
    }

    @Test("an older database keeps its jobs and counts; the new CHECK refuses what the old one did, on this connection too")
    func migrated() throws {
        let directory = try TemporaryDirectory()
        let database = try Self.databaseBeforeV12(directory)
        let insert = "INSERT INTO jobs (queue, argv, cwd, environment_id, state, submitter_uid, submitted_at) VALUES ('default', '[\"x\"]', '/', 1, ?, 0, 5)"
        // The connection's schema before the migration, as a running orchd's would be.
        #expect(try Self.opcodes(database, insert).contains("OpenEphemeral"))
        let jobs = try Self.text(database, "SELECT id || state FROM jobs ORDER BY id")
        let counts = try Self.text(database, "SELECT queue || state || count FROM job_counts ORDER BY state")

        try Migrations.migrator.migrate(database)

        #expect(try Self.text(database, "SELECT id || state FROM jobs ORDER BY id") == jobs)
        #expect(try Self.text(database, "SELECT queue || state || count FROM job_counts ORDER BY state") == counts)
        let table = try Self.text(database, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'jobs'")
        #expect(table.count == 1 && table[0].contains(Migrations.stateCheckV12) && !table[0].contains(Migrations.stateCheckV4))
        // No temporary index built for the CHECK any more, on the connection that migrated.
        #expect(try !Self.opcodes(database, insert).contains("OpenEphemeral"))
        for state in ["waiting", "queued", "running"] {
            let statement = try database.makeStatement(insert)
            try statement.bind([.text(state)])
            try statement.step()
        }
        let refused = try database.makeStatement(insert)
        try refused.bind([.text("paused")])
        #expect(throws: DatabaseError.self) { try refused.step() }
        #expect(try Self.text(database, "PRAGMA quick_check") == ["ok"])
    }

    @Test("a jobs table without v4's CHECK text is refused, and the migration leaves the schema as it was")
    func unexpectedText() throws {
        let directory = try TemporaryDirectory()
        let database = try Self.databaseBeforeV12(directory)
        try Migrations.rewriteStateCheck(database)
        let schema = try Self.text(database, "SELECT sql FROM sqlite_schema ORDER BY name")
        #expect(throws: DatabaseError.self) { try Migrations.rewriteStateCheck(database) }
        #expect(try Self.text(database, "SELECT sql FROM sqlite_schema ORDER BY name") == schema)
    }
}
