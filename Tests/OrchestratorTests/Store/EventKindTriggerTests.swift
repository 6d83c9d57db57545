import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Event kinds written by the database")
struct EventKindTriggerTests {
    /// The kind names the triggers of a migrated database write into `events.kind`: the
    /// literal of an `INSERT ... VALUES (at, 'kind', ...)` and every `THEN`/`ELSE` branch of
    /// a `CASE` choosing the kind.
    private func triggerKinds() throws -> Set<String> {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("orchd.sqlite3"))
        try Migrations.migrator.migrate(db)
        let statement = try db.makeStatement("SELECT sql FROM sqlite_master WHERE type = 'trigger'")
        var kinds: Set<String> = []
        let literal = /(?:THEN|ELSE)\s+'([a-z_]+)'|VALUES\s*\([^,]+,\s*'([a-z_]+)'/
        while try statement.step() {
            let sql = statement.string(at: 0) ?? ""
            guard sql.contains("INSERT INTO events") else { continue }
            for match in sql.matches(of: literal) {
                if let kind = match.output.1 ?? match.output.2 { kinds.insert(String(kind)) }
            }
        }
        // The one kind the store writes itself, when an attempt has started.
        for match in JobStore.startedEventSQL.matches(of: /'([a-z_]+)', id, queue/) { kinds.insert(String(match.output.1)) }
        return kinds
    }

    @Test("every kind the triggers and the store write is a typed EventKind, so observers match constants, not strings")
    func triggersWriteKnownKinds() throws {
        let kinds = try triggerKinds()
        #expect(kinds.isSuperset(of: ["submitted", "started", "finished", "cancelled", "requeued", "retrying", "queued"]), "\(kinds)")
        let known = Set(EventKind.known.map(\.rawValue))
        #expect(kinds.subtracting(known).isEmpty, "kinds the triggers write but EventKind does not declare: \(kinds.subtracting(known))")
    }
}
