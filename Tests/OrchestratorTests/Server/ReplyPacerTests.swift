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

    @Test("job pages split into replies by size, never an empty page into nothing")
    func jobPageSplit() {
        let job = { (length: Int) in
            Job(id: JobID(rawValue: 1), spec: JobSpec(command: .shell(String(repeating: "x", count: length)), cwd: "/", environment: [:]),
                state: .queued, attempt: 0, submittedAt: Date(), submitterUid: 0)
        }
        #expect(JobPageStream.split([]).map(\.count) == [0])
        let small = Array(repeating: job(10), count: 1000)
        #expect(JobPageStream.split(small).map(\.count) == [1000], "ordinary jobs: one reply per page")
        // Each bound is over 6 MiB / 7 ≈ 0.86 MiB: four fit in 4 MiB, and a reply never
        // comes near a client's 64 MiB cap.
        let large = Array(repeating: job(150_000), count: 10)
        let replies = JobPageStream.split(large)
        #expect(replies.map(\.count).reduce(0, +) == 10)
        #expect(replies.allSatisfy { $0.map(JobPageStream.sizeBound(of:)).reduce(0, +) <= JobPageStream.replyBytes })
        let encoded = try? JSONEncoder().encode(large[0])
        #expect((encoded?.count ?? .max) <= JobPageStream.sizeBound(of: large[0]))
        let huge = [job(2_000_000)]
        #expect(JobPageStream.split(huge).map(\.count) == [1], "a job larger than the budget goes alone")
    }
}
