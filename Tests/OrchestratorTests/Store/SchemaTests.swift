import Foundation
import Testing

@testable import Orchestrator

@Suite("Schema and migrations")
struct SchemaTests {
    @Test("a fresh, migrated database matches the CREATE statements of schema.sql")
    func matchesSchemaFile() throws {
        let schemaURL = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schema.sql")
        let expected = try Self.createStatements(String(contentsOf: schemaURL, encoding: .utf8))
            .sorted { Self.objectName($0) < Self.objectName($1) }

        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        try Migrations.migrator.migrate(db)
        let statement = try db.makeStatement("SELECT sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
        var actual: [String] = []
        while try statement.step() { actual.append(Self.normalized(statement.string(at: 0) ?? "")) }

        #expect(actual == expected)
        #expect(expected.count == 25, "every table and index of schema.sql was read")
    }

    @Test("migrating twice applies each migration once and records it by name")
    func idempotent() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        try Migrations.migrator.migrate(db)
        try Migrations.migrator.migrate(db)
        #expect(try Migrations.migrator.appliedMigrations(db) == ["v1-jobs", "v2-retry-events-kept-dependencies", "v3-application-id", "v4-environments", "v5-job-counts", "v6-multi-user", "v7-declared-queues-held-suspended", "v8-executors", "v9-unique-key-per-owner", "v10-indexes-end-with-rowid", "v11-barrier-without-write",
            "v12-state-check-without-list", "v13-event-times-after-the-job", "v14-endings", "v15-started-when-the-process-starts",
        ])
    }

    @Test("a failing migration rolls back alone and stops the run; earlier ones stay applied")
    func failingMigration() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        var migrator = Migrator()
        migrator.registerMigration("one") { db in try db.execute("CREATE TABLE one (x)") }
        migrator.registerMigration("two") { db in try db.execute("CREATE TABLE two (x); CREATE TABLE one (x)") }
        migrator.registerMigration("three") { db in try db.execute("CREATE TABLE three (x)") }
        #expect(throws: DatabaseError.self) { try migrator.migrate(db) }
        #expect(try migrator.appliedMigrations(db) == ["one"])
        #expect(try scalar(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('two', 'three')") == "0")
    }

    @Test("a database with migrations this program does not know is refused")
    func unknownMigration() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        try Migrations.migrator.migrate(db)
        try db.execute("INSERT INTO schema_migrations VALUES ('v99-future', 0)")
        #expect(throws: JobStoreError.unknownMigrations(["v99-future"])) { try Migrations.migrator.migrate(db) }
    }

    // MARK: - Parsing schema.sql

    /// The CREATE statements of a script, normalised: comments dropped, whitespace collapsed,
    /// `IF NOT EXISTS` removed (SQLite does not keep it in `sqlite_master`).
    static func createStatements(_ script: String) -> [String] {
        let withoutComments = script.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }.joined(separator: "\n")
        // Split on the semicolons that end statements, not those inside a trigger's body.
        var statements: [String] = []
        var current = ""
        for piece in withoutComments.split(separator: ";", omittingEmptySubsequences: false) {
            current += piece
            let normalizedSoFar = normalized(current)
            if normalizedSoFar.hasPrefix("CREATE TRIGGER") && !normalizedSoFar.hasSuffix("END") {
                current += ";"
                continue
            }
            statements.append(normalizedSoFar)
            current = ""
        }
        return statements.filter { $0.hasPrefix("CREATE ") }
    }

    static func normalized(_ sql: String) -> String {
        let withoutComments = sql.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }.joined(separator: "\n")
        return withoutComments.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            .replacingOccurrences(of: "IF NOT EXISTS ", with: "")
            .replacingOccurrences(of: "( ", with: "(").replacingOccurrences(of: " )", with: ")")
            // ALTER TABLE ADD COLUMN stores the table's SQL with " , " before the new column.
            .replacingOccurrences(of: " ,", with: ",")
    }

    /// The name after `CREATE TABLE` / `CREATE INDEX` / `CREATE UNIQUE INDEX`, unquoted (a
    /// table renamed by a migration is stored as `"name"`).
    static func objectName(_ statement: String) -> String {
        let words = statement.split(separator: " ").filter { $0 != "UNIQUE" }
        return words.count > 2 ? words[2].filter { $0 != "\"" } : statement
    }
}
