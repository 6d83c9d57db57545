import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Log lines of events")
struct EventDescriptionTests {
    private static let at = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("each job event reads as one line that says how it went, at the level its outcome calls for", arguments: [
        (Event(seq: 1, at: at, kind: .submitted, jobId: JobID(rawValue: 7), state: "queued"), "job 7 submitted", DaemonLog.Level.info),
        (Event(seq: 2, at: at, kind: .submitted, jobId: JobID(rawValue: 8), state: "finished", result: "dependency_failed"),
         "job 8 submitted and finished at once: dependency_failed", DaemonLog.Level.warning),
        (Event(seq: 3, at: at, kind: .started, jobId: JobID(rawValue: 7), attempt: 2), "job 7 started (attempt 2)", DaemonLog.Level.info),
        (Event(seq: 4, at: at, kind: .finished, jobId: JobID(rawValue: 7), result: "failed", exitCode: 3), "job 7 finished: failed(3)", DaemonLog.Level.warning),
        (Event(seq: 5, at: at, kind: .finished, jobId: JobID(rawValue: 9), result: "spawn_failed"), "job 9 finished: spawn_failed", DaemonLog.Level.error),
        (Event(seq: 6, at: at, kind: .retrying, jobId: JobID(rawValue: 7), result: "signaled", signal: 9, attempt: 1),
         "job 7 attempt 1 ended: signaled(9); will retry", DaemonLog.Level.info),
        (Event(seq: 7, at: at, kind: .finished, jobId: JobID(rawValue: 7), result: "succeeded", exitCode: 0), "job 7 finished: succeeded", DaemonLog.Level.info),
    ])
    func jobEvents(event: Event, message: String, level: DaemonLog.Level) {
        #expect(EventDescription.message(event) == message)
        #expect(EventDescription.level(event) == level)
    }
}
