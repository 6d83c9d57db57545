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
}
