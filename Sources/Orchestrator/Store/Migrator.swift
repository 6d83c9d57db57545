import CSQLite
import Foundation
import OrchestratorAPI

/// Brings a database's schema up to date by running, in registration order, the migrations
/// it has not recorded yet; each in its own write transaction, together with its record in
/// `schema_migrations(name, applied_at)`.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.registerMigration("v1-jobs") { db in try db.execute(Migrations.v1JobsSQL) }
/// try migrator.migrate(db)
/// ```
/// The list is append-only: released migrations are never edited, renamed or reordered.
public struct Migrator: Sendable {
    /// The bookkeeping table. `applied_at` is in microseconds since the Unix epoch.
    static let bookkeepingSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            name TEXT PRIMARY KEY,           -- Migration.name
            applied_at INTEGER NOT NULL      -- µs since the Unix epoch (UTC)
        )
        """

    /// The registered migrations, in the order they run.
    public private(set) var migrations: [Migration] = []

    /// Creates a migrator with no migrations.
    public init() {}

    /// Appends a migration.
    /// - Parameters:
    ///   - name: unique; registering a name twice is a programming error and traps.
    ///   - body: the schema change, run inside the migration's transaction.
    public mutating func registerMigration(_ name: String, _ body: @escaping @Sendable (Database) throws -> Void) {
        precondition(!migrations.contains { $0.name == name }, "migration '\(name)' registered twice")
        migrations.append(Migration(name: name, body: body))
    }

    /// The names of the migrations already applied to `db`, in the order they were applied.
    /// - Throws: ``DatabaseError`` when the bookkeeping table cannot be read or created.
    public func appliedMigrations(_ db: Database) throws -> [String] {
        try db.write { db in
            try db.execute(Self.bookkeepingSQL)
            let statement = try db.cachedStatement("SELECT name FROM schema_migrations ORDER BY applied_at, rowid")
            defer { statement.reset() }
            var names: [String] = []
            while try statement.step() { names.append(statement.string(at: 0) ?? "") }
            return names
        }
    }

    /// Runs every registered migration that `db` has not recorded, in order, each in its own
    /// `BEGIN IMMEDIATE` transaction; a failing migration rolls back alone and stops the run.
    /// - Throws: what a migration throws, ``DatabaseError``, or
    ///   ``JobStoreError/unknownMigrations(_:)`` when the database records migrations this
    ///   program does not know (it was written by a newer orchd).
    public func migrate(_ db: Database) throws {
        let applied = try appliedMigrations(db)
        let known = Set(migrations.map(\.name))
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else { throw JobStoreError.unknownMigrations(unknown) }
        let done = Set(applied)
        let pending = migrations.filter { !done.contains($0.name) }
        guard !pending.isEmpty else { return }
        // A migration may rebuild a table others refer to (create, copy, drop, rename): with
        // foreign keys on, the drop would cascade into them. The pragma has no effect inside
        // a transaction, so it is set around them, and each migration checks the references
        // itself before it commits (https://www.sqlite.org/lang_altertable.html#otheralter).
        try db.execute("PRAGMA foreign_keys = OFF")
        defer { try? db.execute("PRAGMA foreign_keys = ON") }
        for migration in pending {
            try db.write { db in
                try migration.body(db)
                let check = try db.makeStatement("PRAGMA foreign_key_check")
                if try check.step() {
                    throw DatabaseError(
                        code: SQLITE_CONSTRAINT,
                        message: "migration \(migration.name) left a reference to a missing row in \(check.string(at: 0) ?? "?")")
                }
                let record = try db.cachedStatement("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)")
                try record.bind([.text(migration.name), .integer(Timestamp.microseconds(Date()))])
                try record.step()
            }
        }
    }
}
