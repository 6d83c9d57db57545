import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Job counts kept by triggers")
struct JobCountsTests {
    /// The counts by counting every job, to compare with the kept ones.
    static func counted(_ store: JobStore) throws -> [QueueName: JobCounts] {
        let statement = try store.database.makeStatement("SELECT queue, state, count(*) FROM jobs GROUP BY queue, state")
        var counts: [QueueName: JobCounts] = [:]
        while try statement.step() {
            let queue = QueueName(rawValue: statement.string(at: 0) ?? "")!
            let count = statement.int(at: 2)
            switch statement.string(at: 1) {
            case "waiting": counts[queue, default: JobCounts()].waiting = count
            case "queued": counts[queue, default: JobCounts()].queued = count
            case "running": counts[queue, default: JobCounts()].running = count
            default: counts[queue, default: JobCounts()].finished = count
            }
        }
        return counts
    }

    @Test("inserts, every transition, a rolled-back batch and pruning keep the counts equal to counting the jobs")
    func keptInStep() throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
        let other = QueueName(rawValue: "other")!
        let specs = (0..<6).map { JobSpec(command: .argv(["true"]), cwd: "/", environment: [:], queue: $0 % 2 == 0 ? .default : other) }
        let jobs = try store.insert(specs, submitterUid: 0, at: Date())
        #expect(try store.countsByQueue() == Self.counted(store))
        try store.claim(jobs[0].id, at: Date())
        try store.claim(jobs[1].id, at: Date())
        try store.markFinished(jobs[0].id, result: .succeeded, at: Date())
        try store.markRetrying(jobs[1].id, result: .failed(exitCode: 1), retryAt: Date(), at: Date())
        _ = try store.markQueued([jobs[1].id])
        try store.markFinished(jobs[2].id, result: .cancelled, at: Date())
        try store.markRequeued(jobs[2].id)
        try store.markFinished(jobs[3].id, result: .cancelled, at: Date())
        #expect(try store.countsByQueue() == Self.counted(store))
        // A unique key already live fails the batch: nothing of it is counted.
        var keyed = specs[0]
        keyed.uniqueKey = "k"
        _ = try store.insert(keyed, submitterUid: 0, at: Date())
        #expect(throws: (any Error).self) { try store.insert([specs[1], keyed], submitterUid: 0, at: Date()) }
        #expect(try store.countsByQueue() == Self.counted(store))
        _ = try store.deleteFinished([jobs[0].id, jobs[3].id])
        #expect(try store.countsByQueue() == Self.counted(store))
        let total = try store.counts()
        #expect(total.queued == 5 && total.finished == 0 && total.running == 0 && total.waiting == 0)
    }
}
