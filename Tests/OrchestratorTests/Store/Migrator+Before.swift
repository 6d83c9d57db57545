@testable import Orchestrator

extension Migrator {
    /// orchd's migrations up to, not including, the one named `name`: a database as an older
    /// orchd left it, for the tests of that migration.
    static func orchd(before name: String) -> Migrator {
        var before = Migrator()
        for migration in Migrations.migrator.migrations.prefix(while: { $0.name != name }) {
            before.registerMigration(migration.name, migration.body)
        }
        return before
    }
}
