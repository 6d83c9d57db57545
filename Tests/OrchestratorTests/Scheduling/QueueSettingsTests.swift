import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Queue settings")
struct QueueSettingsTests {
    @Test("a retry backoff is kept to the microsecond, not rounded through seconds as a Double",
          arguments: [Int64(249), 489, 1_000_003, 86_400_000_000_007])
    func retryBackoffIsExact(microseconds: Int64) async throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
        let scheduler = Scheduler(store: store, configuration: .init(
            concurrency: 1, stateDirectory: directory.path, logDirectory: directory.path, teardownGrace: .seconds(1)))
        _ = try await scheduler.start()
        let span = Duration(microseconds: microseconds)
        let info = try await scheduler.addQueue(
            QueueName(rawValue: "backoff")!, concurrency: nil, retryBase: span, retryCap: span)
        #expect(info.retryBaseUSec == microseconds)
        #expect(info.retryCapUSec == microseconds)
    }

    @Test("a retry backoff of millennia that an older orchd stored puts the next attempt no later than the year 9999, which a timestamp can still say")
    func retryBackoffStaysWithinTimestamps() async throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
        let millennia: Int64 = 100_000 * 31_557_600 * 1_000_000
        try store.save(QueueSettings(name: QueueName(rawValue: "ancient")!, retryBaseUSec: millennia, retryCapUSec: millennia))
        let scheduler = Scheduler(store: store, configuration: .init(
            concurrency: 1, stateDirectory: directory.path, logDirectory: directory.path, teardownGrace: .seconds(1)))
        _ = try await scheduler.start()
        var spec = JobSpec(command: .argv(["false"]), cwd: "/", environment: [:])
        spec.queue = QueueName(rawValue: "ancient")!
        spec.maxAttempts = 2
        let id = try await scheduler.submit([spec], submitterUid: 0).jobs[0].id
        let deadline = ContinuousClock.now + .seconds(30)
        var job = try await scheduler.job(id).job
        while !(job.state == .waiting && job.attempt == 1), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            job = try await scheduler.job(id).job
        }
        #expect(job.state == .waiting && job.attempt == 1, "\(job)")
        let start = try #require(job.spec.notBefore)
        #expect(start.timeIntervalSince1970 < JobSpec.latestStartSeconds)
        #expect(start.timeIntervalSince1970 > JobSpec.latestStartSeconds - 2)
        _ = try await scheduler.cancel([id], by: .root)
    }
}
