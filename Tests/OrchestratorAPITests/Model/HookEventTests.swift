import Testing
import OrchestratorAPI

@Suite("Hook events")
struct HookEventTests {
    @Test("each final result fires exactly the hook events named for it", arguments: [
        ("succeeded", ["finished", "succeeded"]),
        ("failed", ["finished", "failed"]),
        ("signaled", ["finished", "failed"]),
        ("timed_out", ["finished", "failed"]),
        ("spawn_failed", ["finished", "failed"]),
        ("dependency_failed", ["finished", "failed"]),
        ("interrupted", ["finished", "failed"]),
        ("cancelled", ["finished", "cancelled"]),
    ])
    func finishes(result: String, expected: [String]) {
        #expect(HookEvent.fired(byFinishWith: result).map(\.rawValue) == expected)
        let kind: EventKind = result == "cancelled" ? .cancelled : .finished
        #expect(HookEvent.fired(byEventKind: kind, result: result).map(\.rawValue) == expected)
    }

    @Test("every result the store knows is in the table, and an unknown one fires nothing")
    func everyResultCovered() {
        let results = ["succeeded", "failed", "signaled", "timed_out", "cancelled", "spawn_failed", "dependency_failed", "interrupted"]
        for result in results {
            #expect(HookEvent.fired(byFinishWith: result).contains(.finished), "\(result)")
        }
        #expect(Set(HookEvent.finished.results) == Set(results))
        #expect(HookEvent.fired(byFinishWith: "exploded").isEmpty)
    }

    @Test("events that are not finishes fire their own hook event only, or none", arguments: [
        ("started", ["started"]), ("retrying", ["retrying"]), ("queue_drained", ["queue_drained"]),
        ("submitted", []), ("queued", []), ("requeued", []), ("queue_paused", []), ("daemon_ready", []),
    ])
    func otherKinds(kind: String, expected: [String]) {
        let kind = EventKind(rawValue: kind)
        #expect(HookEvent.fired(byEventKind: kind, result: kind == .retrying ? "failed" : nil).map(\.rawValue) == expected)
    }

    @Test("help lists every hook event with what fires it")
    func helpLines() {
        #expect(HookEvent.helpLines.count == HookEvent.allCases.count)
        #expect(HookEvent.helpLines.contains("failed: every unsuccessful final result but cancelled: failed, signaled, timed_out, spawn_failed, dependency_failed, interrupted"))
    }
}
