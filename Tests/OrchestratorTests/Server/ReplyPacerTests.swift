import Foundation
import OrchestratorAPI
import Synchronization
import Testing

@testable import Orchestrator

/// ``ReplyPacer``'s steps against a connection whose room the test hands out by hand.
@Suite("Reply pacing")
struct ReplyPacerTests {
    /// A connection stand-in: records replies, and keeps each `whenReady` request until the
    /// test gives room.
    final class FakeConnection: Sendable {
        private struct State {
            var connected = true
            var waiters: [@Sendable () -> Void] = []
            var replies: [(data: String, isFinal: Bool)] = []
        }
        private let state = Mutex(State())

        var responder: VarlinkResponder {
            VarlinkResponder(
                send: { encode, isFinal in
                    let text = String(decoding: encode(), as: UTF8.self)
                    self.state.withLock { $0.replies.append((text, isFinal)) }
                },
                isConnected: { self.state.withLock { $0.connected } },
                isBackedUp: { false },
                whenReady: { body in self.state.withLock { $0.waiters.append(body) } },
                more: true, oneway: false)
        }

        /// How many producers wait for room.
        var waiting: Int { state.withLock { $0.waiters.count } }
        var replies: [(data: String, isFinal: Bool)] { state.withLock { $0.replies } }
        func disconnect() { state.withLock { $0.connected = false } }

        /// Runs the waiting producers, as the connection does once its outbox drained.
        func giveRoom() {
            let waiters = state.withLock { state in
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter() }
        }
    }

    /// A producer's script: what each step returns, and a record of the steps.
    final class Script: Sendable {
        let results: Mutex<[ReplyPacer.Step]>
        let steps = Mutex(0)
        let disconnects = Mutex(0)
        init(_ results: [ReplyPacer.Step]) { self.results = Mutex(results) }

        func pacer(_ connection: FakeConnection, during: @escaping @Sendable (Int) -> Void = { _ in }) -> ReplyPacer {
            let responder = connection.responder
            return ReplyPacer(responder: responder, step: { done in
                let number = self.steps.withLock { steps in
                    steps += 1
                    return steps
                }
                let result = self.results.withLock { $0.removeFirst() }
                responder.reply(["step": number], continues: result != .finished)
                during(number)
                done(result)
            }, disconnected: { self.disconnects.withLock { $0 += 1 } })
        }
    }

    @Test("each step waits for room; a step with more asks for room again")
    func stepsWaitForRoom() {
        let connection = FakeConnection()
        let script = Script([.more, .more, .finished])
        let pacer = script.pacer(connection)
        pacer.start()
        #expect(script.steps.withLock { $0 } == 0, "nothing is produced before the client has room")
        #expect(connection.waiting == 1)
        connection.giveRoom()
        #expect(script.steps.withLock { $0 } == 1 && connection.waiting == 1)
        connection.giveRoom()
        connection.giveRoom()
        #expect(script.steps.withLock { $0 } == 3)
        #expect(connection.waiting == 0, "a finished stream asks for nothing more")
        #expect(connection.replies.map(\.isFinal) == [false, false, true])
        pacer.wake()
        #expect(connection.waiting == 0, "waking a finished stream does nothing")
    }

    @Test("an idle stream steps again only after wake, once per wake however many come")
    func idleUntilWoken() {
        let connection = FakeConnection()
        let script = Script([.idle, .finished])
        let pacer = script.pacer(connection)
        pacer.start()
        connection.giveRoom()
        #expect(script.steps.withLock { $0 } == 1)
        #expect(connection.waiting == 0, "idle: no room is asked for")
        pacer.wake()
        pacer.wake()
        #expect(connection.waiting == 1, "two wakes, one request")
        connection.giveRoom()
        #expect(script.steps.withLock { $0 } == 2 && connection.replies.last?.isFinal == true)
    }

    @Test("a wake during a step that ends idle leads to another step")
    func wakeDuringStep() {
        let connection = FakeConnection()
        let script = Script([.idle, .finished])
        let box = Mutex<ReplyPacer?>(nil)
        let pacer = script.pacer(connection) { number in
            if number == 1 { box.withLock { $0 }?.wake() }
        }
        box.withLock { $0 = pacer }
        pacer.start()
        connection.giveRoom()
        #expect(connection.waiting == 1, "the data that arrived during the step is not forgotten")
        connection.giveRoom()
        #expect(script.steps.withLock { $0 } == 2)
        box.withLock { $0 = nil }
    }

    @Test("a client that left gets no more steps, and the producer hears of it once")
    func disconnected() {
        let connection = FakeConnection()
        let script = Script([.more, .more])
        let pacer = script.pacer(connection)
        pacer.start()
        connection.giveRoom()
        connection.disconnect()
        connection.giveRoom()
        #expect(script.steps.withLock { $0 } == 1)
        #expect(script.disconnects.withLock { $0 } == 1)
        pacer.wake()
        connection.giveRoom()
        #expect(script.disconnects.withLock { $0 } == 1 && connection.waiting == 0)
    }

    @Test("jobs go out in replies bounded by count and size, and are fetched as many as fit")
    func jobReplies() {
        let job = { (id: Int64, length: Int) in
            Job(id: JobID(rawValue: id), spec: JobSpec(command: .shell(String(repeating: "x", count: length)), cwd: "/", environment: [:]),
                state: .queued, attempt: 0, submittedAt: Date(), submitterUid: 0)
        }
        let pending = JobPageStream.Pending()
        #expect(pending.nextReply() == nil, "nothing fetched yet")
        #expect(pending.fetchCount == JobPageStream.firstFetch)
        pending.fetched((1...64).map { job($0, 10) })
        #expect(pending.nextReply()?.jobs.count == 64)
        #expect(pending.fetchCount == JobPageStream.pageSize, "small jobs: a full page next")
        #expect(pending.nextReply() == nil, "the fetch was full: more may come")

        // Jobs of 150 KB: a size bound over 0.86 MiB each, four to a 4 MiB reply.
        pending.fetched(Array(repeating: job(1, 150_000), count: 1000))
        var counts: [Int] = []
        var last = false
        while !last, let reply = pending.nextReply() {
            counts.append(reply.jobs.count)
            last = reply.isLast
            #expect(reply.jobs.map(JobPageStream.sizeBound(of:)).reduce(0, +) <= JobPageStream.replyBytes)
        }
        #expect(counts.reduce(0, +) == 1000 && counts.allSatisfy { $0 == 4 } && !last)
        #expect(pending.fetchCount == 4, "large jobs: only as many as fit in a reply next")

        let encoded = try? JSONEncoder().encode(job(1, 150_000))
        #expect((encoded?.count ?? .max) <= JobPageStream.sizeBound(of: job(1, 150_000)))

        // A short fetch is the end: its last reply says so; a job over the budget goes alone.
        pending.fetched([job(1, 5_000_000), job(2, 10)])
        #expect(pending.nextReply().map { "\($0.jobs.count) \($0.isLast)" } == "1 false")
        #expect(pending.nextReply().map { "\($0.jobs.count) \($0.isLast)" } == "1 true")
        pending.fetched([])
        #expect(pending.nextReply().map { "\($0.jobs.count) \($0.isLast)" } == "0 true", "an empty end is one empty reply")
    }
}
