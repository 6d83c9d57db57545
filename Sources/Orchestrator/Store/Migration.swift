/// One named, append-only step of the schema's history, run once per database by ``Migrator``.
public struct Migration: Sendable {
    /// The name recorded in `schema_migrations` once applied, e.g. `"v1-jobs"`. Never rename
    /// or edit a released migration: add a new one.
    public let name: String
    /// The change; runs inside the migration's own write transaction.
    public let body: @Sendable (Database) throws -> Void

    /// Creates a migration.
    /// - Parameters:
    ///   - name: unique among the migrator's migrations.
    ///   - body: the schema change.
    public init(name: String, body: @escaping @Sendable (Database) throws -> Void) {
        self.name = name
        self.body = body
    }
}
