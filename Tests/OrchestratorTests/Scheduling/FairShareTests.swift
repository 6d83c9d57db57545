import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Fair sharing between users")
struct FairShareTests {
    private func runner(concurrency: Int, perUser: Int?) -> QueueRunner {
        QueueRunner(settings: QueueSettings(name: .default, maxRunningPerUser: perUser), defaultConcurrency: concurrency)
    }

    private func ids(_ values: [Int64]) -> [JobID] { values.map(JobID.init(rawValue:)) }

    @Test("free slots go to the users in turn, each user's jobs in their own order")
    func roundRobin() {
        let queue = runner(concurrency: 4, perUser: nil)
        let chosen = queue.chooseRoundRobin([
            .init(owner: 1000, jobs: ids([1, 2, 3])), .init(owner: 1001, jobs: ids([4, 5, 6])),
        ])
        #expect(chosen == ids([1, 4, 2, 5]))
    }

    @Test("no user gets more than the per-user limit, counting the jobs they already run")
    func perUserLimit() {
        let queue = runner(concurrency: 4, perUser: 1)
        queue.noteRunning(1000, 1)
        let chosen = queue.chooseRoundRobin([
            .init(owner: 1000, jobs: ids([1, 2])), .init(owner: 1001, jobs: ids([3, 4])), .init(owner: 1002, jobs: ids([5])),
        ])
        #expect(chosen == ids([3, 5]))
    }

    @Test("the next turn starts with the user after the one served last")
    func rotation() {
        let queue = runner(concurrency: 1, perUser: nil)
        queue.lastServedOwner = 1000
        let candidates: [JobStore.OwnerCandidates] = [.init(owner: 1000, jobs: ids([1])), .init(owner: 1001, jobs: ids([2]))]
        #expect(queue.chooseRoundRobin(candidates) == ids([2]))
        queue.lastServedOwner = 1001
        #expect(queue.chooseRoundRobin(candidates) == ids([1]))
    }
}
