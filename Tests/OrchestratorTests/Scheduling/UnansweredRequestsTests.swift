import Foundation
import OrchestratorAPI
import Synchronization
import Testing

@testable import Orchestrator

@Suite("Unanswered requests (what a stop waits for)")
struct UnansweredRequestsTests {
    /// Counts what a responder sent.
    final class Sends: Sendable {
        let count = Mutex(0)
    }

    /// A responder whose sends are only counted, as a connection would write them.
    static func responder(sends: Sends) -> VarlinkResponder {
        VarlinkResponder(
            send: { _, _ in sends.count.withLock { $0 += 1 } },
            isConnected: { true }, isBackedUp: { false }, whenReady: { $0() }, more: true, oneway: false)
    }

    @Test("with nothing outstanding, the wait returns at once")
    func nothingOutstanding() async {
        let unanswered = UnansweredRequests()
        #expect(await unanswered.closeAndWait(timeout: .seconds(30)))
    }

    @Test("a counted call is outstanding until its final reply, not its continued ones, and counts once")
    func countedUntilFinalReply() async throws {
        let unanswered = UnansweredRequests()
        let sends = Sends()
        let responder = try #require(Self.responder(sends: sends).counted(in: unanswered))
        #expect(unanswered.count == 1)
        responder.reply(VarlinkNoParameters(), continues: true)
        #expect(unanswered.count == 1, "a continued reply does not end the call")

        let waited = Task { await unanswered.closeAndWait(timeout: .seconds(30)) }
        responder.reply(VarlinkNoParameters())
        #expect(await waited.value, "the final reply ended the wait")
        // A second final reply (a handler's mistake) must not count again.
        responder.fail(VarlinkError.invalidParameter("x"))
        #expect(unanswered.count == 0)
        #expect(sends.count.withLock { $0 } == 3, "every reply still went to the connection")
    }

    @Test("once closed, a new call is not taken, while one taken before is still waited for")
    func closedRefusesNewCalls() async throws {
        let unanswered = UnansweredRequests()
        let before = try #require(Self.responder(sends: Sends()).counted(in: unanswered))
        let waited = Task { await unanswered.closeAndWait(timeout: .seconds(30)) }
        // The close happens in the task: wait until it has, i.e. until begin() refuses (for 600 s
        // at most: a close that never comes fails below instead of spinning for ever).
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline, unanswered.begin() { unanswered.answered(); await Task.yield() }
        #expect(Self.responder(sends: Sends()).counted(in: unanswered) == nil)
        #expect(unanswered.count == 1)
        before.reply(VarlinkNoParameters())
        #expect(await waited.value)
    }

    @Test("a wait for a call that never answers gives up after its timeout")
    func timesOut() async {
        let unanswered = UnansweredRequests()
        #expect(unanswered.begin())
        #expect(await unanswered.closeAndWait(timeout: .milliseconds(100)) == false)
        // It is still counted: answering it later is harmless.
        unanswered.answered()
        #expect(unanswered.count == 0)
    }
}
