import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("JobStore hold, suspend, edit and selections")
struct JobStoreChangesTests {
    let directory: TemporaryDirectory
    let store: JobStore
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    init() throws {
        directory = try TemporaryDirectory()
        store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
    }

    func spec(priority: Int = 0, queue: QueueName = .default) -> JobSpec {
        JobSpec(command: .argv(["true"]), cwd: "/tmp", environment: [:], queue: queue, priority: priority)
    }

    @Test("a held job is passed over by claimNext, even at the highest priority, until released")
    func heldNotClaimed() throws {
        let jobs = try store.insert([spec(priority: 9), spec()], submitterUid: 0, at: now)
        #expect(try store.setHeld(jobs[0].id, true).held)
        #expect(try store.claimNext(in: .default, excluding: [], limit: 1, at: now) { _ in true }.map(\.id) == [jobs[1].id])
        #expect(try store.claimNext(in: .default, excluding: [], limit: 1, at: now) { _ in true }.isEmpty)
        #expect(try store.setHeld(jobs[0].id, false).held == false)
        #expect(try store.claimNext(in: .default, excluding: [], limit: 1, at: now) { _ in true }.map(\.id) == [jobs[0].id])
        #expect(throws: JobStoreError.self) { try store.setHeld(jobs[0].id, true) }
    }

    @Test("suspended is recorded only for a running job and cleared when its attempt ends")
    func suspendedCleared() throws {
        let job = try store.insert(spec(), submitterUid: 0, at: now)
        #expect(throws: JobStoreError.self) { try store.setSuspended(job.id, true) }
        _ = try store.claim(job.id, at: now)
        #expect(try store.setSuspended(job.id, true).suspended)
        #expect(try store.markFinished(job.id, result: .cancelled, at: now).suspended == false)
    }

    @Test("edit writes priority, queue, start time, name and state of a job not started, and counts follow the queue")
    func edit() throws {
        let other = try #require(QueueName(rawValue: "other"))
        let job = try store.insert(spec(), submitterUid: 0, at: now)
        var changed = job.spec
        changed.priority = 4
        changed.queue = other
        changed.name = "n"
        changed.notBefore = now.addingTimeInterval(60)
        let edited = try store.edit(job.id, spec: changed, state: .waiting)
        #expect(edited.spec.priority == 4 && edited.spec.queue == other && edited.spec.name == "n" && edited.state == .waiting)
        #expect(try store.countsByQueue()[other]?.waiting == 1 && store.countsByQueue()[.default]?.queued ?? 0 == 0)
        _ = try store.markFinished(job.id, result: .cancelled, at: now)
        #expect(throws: JobStoreError.self) { try store.edit(job.id, spec: changed, state: .queued) }
    }

    @Test("the selections of bulk requests: unfinished by queue and state; finished by result and queue")
    func selections() throws {
        let other = try #require(QueueName(rawValue: "other"))
        let jobs = try store.insert([spec(), spec(queue: other), spec(), spec(queue: other)], submitterUid: 0, at: now)
        _ = try store.claim(jobs[2].id, at: now)
        _ = try store.markFinished(jobs[3].id, result: .failed(exitCode: 1), at: now)
        #expect(try store.unfinishedJobIDs(queue: nil, stateName: nil) == [jobs[0].id, jobs[1].id, jobs[2].id])
        #expect(try store.unfinishedJobIDs(queue: .default, stateName: "queued") == [jobs[0].id])
        #expect(try store.unfinishedJobIDs(queue: nil, stateName: "running") == [jobs[2].id])
        #expect(try store.unfinishedJobIDs(queue: other, stateName: nil) == [jobs[1].id])
        #expect(try store.unfinishedJobIDs(queue: .default, stateName: nil) == [jobs[0].id, jobs[2].id])
        #expect(try store.unfinishedJobIDs(queue: .default, stateName: "running") == [jobs[2].id])
        #expect(try store.unfinishedJobIDs(queue: other, stateName: "running").isEmpty)
        #expect(try store.finishedJobIDs(results: ["failed"], queue: other) == [jobs[3].id])
        #expect(try store.finishedJobIDs(results: ["failed"], queue: .default).isEmpty)
    }

    @Test("the unfinished jobs of a queue are found through the state's index or the queued jobs' index, never through the queue's finished ones",
          arguments: [false, true], [nil, "waiting", "queued", "running"] as [String?])
    func unfinishedByStateIndex(byQueue: Bool, state: String?) throws {
        let sql = JobStore.unfinishedJobIDsSQL(byQueue: byQueue, state: state)
        let statement = try store.database.makeStatement("EXPLAIN QUERY PLAN " + sql)
        let bound = (byQueue ? 1 : 0) + (state != nil && (state != "queued" || !byQueue) ? 1 : 0)
        try statement.bind(Array(repeating: DatabaseValue.text("queued"), count: bound))
        var details: [String] = []
        while try statement.step() { details.append(statement.string(at: 3) ?? "") }
        let searches = details.filter { $0.hasPrefix("SEARCH") || $0.hasPrefix("SCAN") }
        #expect(!searches.isEmpty && searches.allSatisfy { detail in
            // `INDEX` or `COVERING INDEX`: without the queue the index holds all the query reads.
            detail.hasPrefix("SEARCH jobs USING") && (detail.hasSuffix("INDEX jobs_by_state (state=?)") || detail.hasSuffix("INDEX jobs_runnable (queue=?)"))
        }, "\(details)")
        #expect(searches.contains { $0.contains("jobs_runnable") } == (byQueue && (state == nil || state == "queued")), "\(details)")
    }
}
