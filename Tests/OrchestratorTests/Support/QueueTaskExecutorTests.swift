import Dispatch
import Testing

@testable import Orchestrator

@Suite("A task executor over an actor's queue")
struct QueueTaskExecutorTests {
    /// An actor on a ``DispatchQueueExecutor``, as the scheduler is.
    actor Counter {
        nonisolated let executor: DispatchQueueExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        private var value = 0

        init(queue: DispatchQueue) {
            executor = DispatchQueueExecutor(queue: queue)
        }

        func increment() async -> Int {
            value += 1
            return value
        }
    }

    @Test("a task preferring it runs its code outside the actor on the queue, and its calls into the actor still complete")
    func runsOnTheQueue() async {
        let queue = DispatchQueue(label: "test.control")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let counter = Counter(queue: queue)
        let executor = QueueTaskExecutor(queue: queue)
        let results = await withTaskGroup(of: (onQueueBefore: Bool, value: Int, onQueueAfter: Bool).self) { group in
            for _ in 0..<200 {
                group.addTask {
                    await Task(executorPreference: executor) {
                        let before = DispatchQueue.getSpecific(key: key) == true
                        let value = await counter.increment()
                        return (before, value, DispatchQueue.getSpecific(key: key) == true)
                    }.value
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.onQueueBefore && $0.onQueueAfter })
        #expect(Set(results.map(\.value)) == Set(1...200), "every call reached the actor once")
    }
}
