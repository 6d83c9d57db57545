import Dispatch
import Foundation
import OrchestratorAPI
import Synchronization
import Testing

@testable import Orchestrator

/// Lines appended from any thread.
final class SharedLog: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Records every call it gets, in order, with the caller's arguments.
final class RecordingObserver: JobObserver {
    let name: String
    let log = SharedLog()
    let shared: SharedLog?
    let answer: [String: String]?

    init(name: String, shared: SharedLog? = nil, answer: [String: String]? = nil) {
        self.name = name
        self.shared = shared
        self.answer = answer
    }

    func job(_ job: Job, changedFrom previousState: JobState?, to newState: JobState, result: JobResult?) {
        let line = "\(name): \(job.id) \(previousState?.name ?? "nil")->\(newState.name) \(result?.name ?? "nil")"
        log.append(line)
        shared?.append(line)
    }

    func environment(for job: Job) -> [String: String]? { answer }

    var lines: [String] { log.all }
}

@Suite("Observer set (the multicast delegate)")
struct ObserverSetTests {
    private let job = Job(
        id: JobID(rawValue: 7), spec: JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), state: .running,
        submittedAt: Date(), submitterUid: 0)

    @Test("observers are called in the order added, with every argument, optional values kept optional")
    func orderAndArguments() {
        let set = ObserverSet<any JobObserver>()
        let shared = SharedLog()
        let first = RecordingObserver(name: "first", shared: shared)
        let second = RecordingObserver(name: "second", shared: shared)
        set.add(first)
        set.add(second)
        let job = self.job
        set.notify { $0.job(job, changedFrom: nil, to: .queued, result: nil) }
        set.notify { $0.job(job, changedFrom: .running, to: .finished(.failed(exitCode: 3)), result: .failed(exitCode: 3)) }
        #expect(shared.all == [
            "first: 7 nil->queued nil", "second: 7 nil->queued nil",
            "first: 7 running->finished failed", "second: 7 running->finished failed",
        ])
    }

    @Test("a released observer is no longer called and is not kept alive")
    func weakReferences() {
        let set = ObserverSet<any JobObserver>()
        weak var released: RecordingObserver?
        do {
            let temporary = RecordingObserver(name: "temporary")
            released = temporary
            set.add(temporary)
            #expect(set.count == 1)
        }
        #expect(released == nil, "the set holds observers weakly")
        let job = self.job
        set.notify { $0.job(job, changedFrom: nil, to: .queued, result: nil) }
        #expect(set.count == 0)
    }

    @Test("a query takes the last answer, skipping observers that do not answer")
    func lastResponderWins() {
        let set = ObserverSet<any JobObserver>()
        let a = RecordingObserver(name: "a", answer: ["X": "1"])
        let b = RecordingObserver(name: "b", answer: ["X": "2"])
        let c = RecordingObserver(name: "c", answer: nil)
        set.add(a)
        set.add(b)
        set.add(c)
        let job = self.job
        let answer: [String: String]? = set.query { $0.environment(for: job) }
        #expect(answer == ["X": "2"])
    }

    @Test("an observer on its own queue that blocks delays neither the caller nor the other observers")
    func blockingObserverIsolated() {
        let set = ObserverSet<any JobObserver>()
        let gate = DispatchSemaphore(value: 0)
        let blocked = BlockingObserver(gate: gate)
        let fast = RecordingObserver(name: "fast")
        set.add(blocked, queue: DispatchQueue(label: "test.slow-observer"))
        set.add(fast)
        let job = self.job
        set.notify { $0.job(job, changedFrom: nil, to: .queued, result: nil) }
        #expect(fast.lines.count == 1, "the fast observer was called while the slow one is still blocked")
        #expect(blocked.calls.load(ordering: .relaxed) == 0, "the slow observer has not finished: notify did not wait for it")
        gate.signal()
    }

    @Test("wait: true delivers on the observer's queue before notify returns")
    func synchronousDelivery() {
        let set = ObserverSet<any JobObserver>()
        let observer = RecordingObserver(name: "sync")
        set.add(observer, queue: DispatchQueue(label: "test.sync-observer"), wait: true)
        let job = self.job
        set.notify { $0.job(job, changedFrom: nil, to: .queued, result: nil) }
        #expect(observer.lines == ["sync: 7 nil->queued nil"])
    }
}

/// An observer whose callback blocks until the test opens the gate.
final class BlockingObserver: JobObserver {
    let gate: DispatchSemaphore
    let calls = Atomic<Int>(0)
    init(gate: DispatchSemaphore) { self.gate = gate }
    func job(_ job: Job, changedFrom previousState: JobState?, to newState: JobState, result: JobResult?) {
        gate.wait()
        calls.wrappingAdd(1, ordering: .relaxed)
    }
}
