import Foundation
import OrchestratorAPI
import Synchronization
import Testing

@testable import Orchestrator

/// Records each event and each end of a delivery, in order.
private final class DeliveryObserver: JobObserver {
    let log = SharedLog()

    func eventRecorded(_ event: Event) {
        log.append("\(event.kind.rawValue) \(event.jobId?.description ?? "-")")
    }

    func eventsDelivered() {
        log.append("delivered")
    }
}

@Suite("End of an event delivery")
struct EventsDeliveredTests {
    @Test("observers hear that a delivery ended after its last event, before the submit that caused it is answered")
    func deliveredAfterLastEvent() async throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
        let scheduler = Scheduler(store: store, configuration: .init(
            concurrency: 1, stateDirectory: directory.path, logDirectory: directory.path, teardownGrace: .seconds(1)))
        let observer = DeliveryObserver()
        scheduler.observers.add(observer)
        _ = try await scheduler.start()
        _ = try await scheduler.setPaused([.default], paused: true)
        let specs = (0..<3).map { _ in JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]) }
        let ids = try await scheduler.submit(specs, submitterUid: 0).jobs.map(\.id)

        let lines = observer.log.all
        let submitted = ids.map { "submitted \($0)" }
        // The three submits are heard in order, and a delivery ends after the last of them.
        let positions = submitted.compactMap { lines.firstIndex(of: $0) }
        #expect(positions.count == 3 && positions == positions.sorted(), "\(lines)")
        #expect(lines.last == "delivered", "\(lines)")
        withExtendedLifetime(observer) {}
        await scheduler.shutdown()
    }
}
