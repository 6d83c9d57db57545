import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Waiting for jobs")
struct WaitTests {
    private func makeScheduler(_ directory: TemporaryDirectory) async throws -> Scheduler {
        let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
        let scheduler = Scheduler(store: store, configuration: .init(
            concurrency: 2, stateDirectory: directory.path, logDirectory: directory.path, teardownGrace: .seconds(1)))
        _ = try await scheduler.start()
        return scheduler
    }

    private func submit(_ arguments: [String], as uid: UInt32, to scheduler: Scheduler) async throws -> JobID {
        let spec = JobSpec(command: .argv(arguments), cwd: "/", environment: [:])
        return try await scheduler.submit([spec], submitterUid: uid).jobs[0].id
    }

    @Test("a wait on jobs some of which have finished answers with every job in the order asked, once the others end")
    func finishedAndUnfinished() async throws {
        let directory = try TemporaryDirectory()
        let scheduler = try await makeScheduler(directory)
        let done = try await submit(["true"], as: 0, to: scheduler)
        _ = try await scheduler.wait(for: [done])
        let running = try await submit(["sleep", "1000"], as: 1000, to: scheduler)

        let waiting = Task { try await scheduler.wait(for: [running, done, running], by: Caller(uid: 0, isAdmin: true)) }
        _ = try await scheduler.cancel([running], by: .root)
        let answer = try await waiting.value
        #expect(answer.map(\.id) == [running, done, running])
        #expect(answer[0].state == .finished(.cancelled))
        #expect(answer[1].state == .finished(.succeeded))
    }

    @Test("a wait on another user's unfinished job is refused, and one on an unknown job says there is none; neither waits")
    func refusedWithoutWaiting() async throws {
        let directory = try TemporaryDirectory()
        let scheduler = try await makeScheduler(directory)
        let running = try await submit(["sleep", "1000"], as: 1000, to: scheduler)
        let unknown = JobID(rawValue: running.rawValue + 100)

        await #expect {
            try await scheduler.wait(for: [running], by: Caller(uid: 1001, isAdmin: false))
        } throws: { error in
            guard case .permissionDenied(let id)? = error as? SchedulerError else { return false }
            return id == running
        }
        await #expect {
            try await scheduler.wait(for: [running, unknown], by: Caller(uid: 1000, isAdmin: false))
        } throws: { error in
            guard case .noSuchJob(let id)? = error as? SchedulerError else { return false }
            return id == unknown
        }
        _ = try await scheduler.cancel([running], by: .root)
    }
}
