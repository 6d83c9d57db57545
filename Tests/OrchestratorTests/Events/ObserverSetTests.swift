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

/// Records every event it hears, in order.
final class RecordingObserver: JobObserver {
    let name: String
    let log = SharedLog()
    let shared: SharedLog?

    init(name: String, shared: SharedLog? = nil) {
        self.name = name
        self.shared = shared
    }

    func eventRecorded(_ event: Event) {
        let line = "\(name): \(event.seq) \(event.kind.rawValue) \(event.jobId?.description ?? "nil")"
        log.append(line)
        shared?.append(line)
    }

    var lines: [String] { log.all }
}

@Suite("Observer set (the multicast delegate)")
struct ObserverSetTests {
    private func event(_ seq: Int64, _ kind: EventKind, job: Int64? = nil) -> Event {
        Event(seq: seq, at: Date(), kind: kind, jobId: job.map { JobID(rawValue: $0) })
    }

    @Test("observers are called in the order added, with every argument, optional values kept optional")
    func orderAndArguments() {
        let set = ObserverSet<any JobObserver>()
        let shared = SharedLog()
        let first = RecordingObserver(name: "first", shared: shared)
        let second = RecordingObserver(name: "second", shared: shared)
        set.add(first)
        set.add(second)
        let submitted = event(1, .submitted, job: 7)
        let ready = event(2, .daemonReady)
        set.notify { $0.eventRecorded(submitted) }
        set.notify { $0.eventRecorded(ready) }
        #expect(shared.all == [
            "first: 1 submitted 7", "second: 1 submitted 7",
            "first: 2 daemon_ready nil", "second: 2 daemon_ready nil",
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
        let ready = event(1, .daemonReady)
        set.notify { $0.eventRecorded(ready) }
        #expect(set.count == 0)
    }

    @Test("a removed observer is no longer called; the others still are")
    func removal() {
        let set = ObserverSet<any JobObserver>()
        let kept = RecordingObserver(name: "kept")
        let removed = RecordingObserver(name: "removed")
        set.add(kept)
        set.add(removed)
        set.remove(removed)
        let ready = event(1, .daemonReady)
        set.notify { $0.eventRecorded(ready) }
        #expect(kept.lines == ["kept: 1 daemon_ready nil"])
        #expect(removed.lines.isEmpty)
    }
}
