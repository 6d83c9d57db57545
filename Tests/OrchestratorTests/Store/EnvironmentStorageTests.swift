import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Environments stored once")
struct EnvironmentStorageTests {
    static func spec(_ environment: [String: String], argv: [String] = ["true"]) -> JobSpec {
        JobSpec(command: .argv(argv), cwd: "/", environment: environment)
    }

    @Test("jobs with the same environment share one row, in a batch and across submits; each reads back its own")
    func sharedRows() throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        let shell = ["PATH": "/usr/bin:/bin", "HOME": "/home/ann", "LANG": "C.UTF-8"]
        let other = ["PATH": "/bin"]
        let batch = try store.insert([Self.spec(shell), Self.spec(shell), Self.spec(other), Self.spec(shell)], submitterUid: 0, at: Date())
        let single = try store.insert(Self.spec(shell), submitterUid: 0, at: Date())
        let empty = try store.insert(Self.spec([:]), submitterUid: 0, at: Date())
        #expect(try scalar(store.database, "SELECT count(*) FROM environments") == "3")
        #expect(try scalar(store.database, "SELECT count(DISTINCT environment_id) FROM jobs") == "3")
        // A fresh store decodes from the rows, not from what it wrote.
        let reopened = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        for job in batch + [single, empty] {
            #expect(try reopened.job(job.id)?.spec.environment == job.spec.environment)
        }
        #expect(try reopened.job(batch[2].id)?.spec.environment == other)
    }

    @Test("an environment read inside a transaction that rolls back is not remembered: the next row that gets its ID reads as itself")
    func rolledBackEnvironment() throws {
        struct Refused: Error {}
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        _ = try store.insert(Self.spec(["A": "1"]), submitterUid: 0, at: Date())
        // As a submit claims its new job before its commit, which then fails.
        #expect(throws: Refused.self) {
            _ = try store.insert([(Self.spec(["SECRET": "first"]), .queued)], submitterUid: 0, at: Date()) { _ in
                let claimed = try store.claimNext(in: .default, excluding: [], limit: 2, at: Date()) { _ in true }
                #expect(claimed.map(\.spec.environment).contains(["SECRET": "first"]))
                throw Refused()
            }
        }
        let second = try store.insert(Self.spec(["SECRET": "second"]), submitterUid: 1, at: Date())
        let claimed = try store.claimNext(in: .default, excluding: [], limit: 2, at: Date()) { _ in true }
        #expect(claimed.first { $0.id == second.id }?.spec.environment == ["SECRET": "second"])
        #expect(try store.job(second.id)?.spec.environment == ["SECRET": "second"])
    }

    @Test("pruning deletes an environment with the last job that refers to it, and keeps shared ones")
    func pruned() throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        let kept = try store.insert(Self.spec(["A": "1"]), submitterUid: 0, at: Date())
        let first = try store.insert(Self.spec(["A": "1"]), submitterUid: 0, at: Date())
        let alone = try store.insert(Self.spec(["B": "2"]), submitterUid: 0, at: Date())
        for job in [first, alone] { try store.markFinished(job.id, result: .cancelled, at: Date()) }
        #expect(try store.deleteFinished([first.id, alone.id]).map(\.id) == [first.id, alone.id])
        #expect(try scalar(store.database, "SELECT group_concat(json) FROM environments") == #"{"A":"1"}"#)
        #expect(try store.job(kept.id)?.spec.environment == ["A": "1"])
        // Submitting the pruned environment again stores it again.
        let again = try store.insert(Self.spec(["B": "2"]), submitterUid: 0, at: Date())
        #expect(try store.job(again.id)?.spec.environment == ["B": "2"])
        #expect(try scalar(store.database, "SELECT count(*) FROM environments") == "2")
    }

    @Test("an environment stored by a transaction that rolled back is stored again by the next submit")
    func rolledBack() throws {
        struct Abandon: Error {}
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        let environment = ["PATH": "/bin", "HOME": "/home/ann"]
        #expect(throws: Abandon.self) {
            try store.database.write { _ in
                _ = try store.insert(Self.spec(environment), submitterUid: 0, at: Date())
                throw Abandon()
            }
        }
        #expect(try scalar(store.database, "SELECT count(*) FROM environments") == "0")
        let job = try store.insert(Self.spec(environment), submitterUid: 0, at: Date())
        let next = try store.insert(Self.spec(environment), submitterUid: 0, at: Date())
        #expect(try scalar(store.database, "SELECT count(*) FROM environments") == "1")
        let reopened = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        #expect(try reopened.job(job.id)?.spec.environment == environment)
        #expect(try reopened.job(next.id)?.spec.environment == environment)
    }

    @Test("environments equal as Swift strings but not byte for byte keep their own bytes, in a batch and across submits")
    func canonicallyEquivalentValues() throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        let composed = ["NAME": "caf\u{E9}"]
        let decomposed = ["NAME": "cafe\u{301}"]
        #expect(composed == decomposed, "the premise: String's == is canonical equivalence")
        let batch = try store.insert([Self.spec(composed), Self.spec(decomposed)], submitterUid: 0, at: Date())
        let first = try store.insert(Self.spec(composed), submitterUid: 0, at: Date())
        let second = try store.insert(Self.spec(decomposed), submitterUid: 0, at: Date())
        let reopened = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        for (job, expected) in zip(batch + [first, second], [composed, decomposed, composed, decomposed]) {
            let stored = try #require(try reopened.job(job.id)?.spec.environment["NAME"])
            #expect(Array(stored.utf8) == Array(expected["NAME"]!.utf8), "job \(job.id.rawValue)")
        }
        #expect(try scalar(store.database, "SELECT count(*) FROM environments") == "2")
    }

    @Test("a hash collision keeps both environments apart")
    func collision() throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        let job = try store.insert(Self.spec(["A": "1"]), submitterUid: 0, at: Date())
        // Another environment's row with the same hash as the next one submitted.
        let text = #"{"B":"2"}"#
        try store.database.execute("UPDATE environments SET hash = \(JobStore.contentHash(text))")
        let second = try store.insert(Self.spec(["B": "2"]), submitterUid: 0, at: Date())
        #expect(try store.job(second.id)?.spec.environment == ["B": "2"])
        #expect(try store.job(job.id)?.spec.environment == ["A": "1"])
        #expect(try scalar(store.database, "SELECT count(*) FROM environments") == "2")
    }

    @Test("a v3 database migrates with every job's environment, dependency, attempt and the ID sequence intact")
    func migratesV3() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.sqlite3")
        do {
            let db = try Database(path: path)
            var v3 = Migrator()
            for migration in Migrations.migrator.migrations.prefix(3) { v3.registerMigration(migration.name, migration.body) }
            try v3.migrate(db)
            try db.execute(#"""
                INSERT INTO jobs (id, queue, argv, cwd, environment, state, submitter_uid, submitted_at) VALUES
                    (1, 'default', '["true"]', '/', '{"HOME":"/root","PATH":"/bin"}', 'queued', 0, 0),
                    (2, 'default', '["true"]', '/', '{"HOME":"/root","PATH":"/bin"}', 'waiting', 0, 0),
                    (3, 'other', '["env"]', '/tmp', '{}', 'running', 0, 0),
                    (7, 'default', '["false"]', '/', '{"X":"ü"}', 'queued', 0, 0);
                INSERT INTO jobs (id, queue, shell, cwd, environment, state, result, exit_code, attempt, submitter_uid, submitted_at)
                    VALUES (9, 'default', 'exit 3', '/', '{"HOME":"/root","PATH":"/bin"}', 'finished', 'failed', 3, 1, 0, 0);
                INSERT INTO job_attempts (job_id, attempt, finished_at, result, exit_code) VALUES (9, 1, 5, 'failed', 3);
                INSERT INTO job_dependencies (job_id, depends_on) VALUES (2, 1);
                UPDATE sqlite_sequence SET seq = 12 WHERE name = 'jobs';
                """#)
        }
        let store = try JobStore(database: Database(path: path, verify: DatabaseIdentity.verify))
        #expect(try Migrations.migrator.appliedMigrations(store.database).last == "v15-started-when-the-process-starts")
        let environments: [Int64: [String: String]] = [
            1: ["HOME": "/root", "PATH": "/bin"], 2: ["HOME": "/root", "PATH": "/bin"], 3: [:], 7: ["X": "ü"],
            9: ["HOME": "/root", "PATH": "/bin"],
        ]
        for (id, environment) in environments {
            #expect(try store.job(JobID(rawValue: id))?.spec.environment == environment, "job \(id)")
        }
        #expect(try scalar(store.database, "SELECT count(*) FROM environments") == "3")
        #expect(try store.job(JobID(rawValue: 2))?.after == [JobID(rawValue: 1)])
        #expect(try store.attempts(of: JobID(rawValue: 9)).map(\.result) == [.failed(exitCode: 3)])
        #expect(try store.job(JobID(rawValue: 3))?.state == .running)
        #expect(try scalar(store.database, "PRAGMA foreign_keys") == "1")
        // IDs go on after the largest ever used, not the largest left.
        #expect(try store.insert(Self.spec([:]), submitterUid: 0, at: Date()).id == JobID(rawValue: 13))
        // The triggers came back with the table.
        #expect(try scalar(store.database, "SELECT kind FROM events ORDER BY seq DESC LIMIT 1") == "submitted")
    }
}
