import Synchronization
import Testing
@testable import Orchestrator

@Suite("Read turns")
struct ReadTurnsTests {
    /// The order reads got in.
    final class Log: Sendable {
        private let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
        var entries: [String] { names.withLock { $0 } }
    }

    /// A read that stays inside its turn until released, and notes when it got in.
    final class HeldRead: Sendable {
        private let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let released = Mutex(false)
        let entered = Atomic<Bool>(false)

        func body(log: Log, name: String) async {
            log.append(name)
            entered.store(true, ordering: .sequentiallyConsistent)
            await withCheckedContinuation { continuation in
                let already = released.withLock { released in
                    if !released { release.withLock { $0 = continuation } }
                    return released
                }
                if already { continuation.resume() }
            }
        }

        func finish() {
            let waiting = released.withLock { released -> CheckedContinuation<Void, Never>? in
                released = true
                return release.withLock { $0.take() }
            }
            waiting?.resume()
        }
    }

    /// Waits until `condition` holds, asked again at each turn of the pool (the turns tell no
    /// one); one that still does not after 600 s fails the test instead of spinning for ever.
    private func until(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(600)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "still waiting after 600 s", sourceLocation: sourceLocation)
            await Task.yield()
        }
    }

    @Test("no more than width reads are inside at once; the rest wait")
    func width() async throws {
        let turns = ReadTurns(width: 2)
        let log = Log()
        let reads = (0..<3).map { _ in HeldRead() }
        var tasks: [Task<Void, Never>] = []
        for (index, read) in reads.enumerated() {
            tasks.append(Task { await turns.run(as: 1) { await read.body(log: log, name: "r\(index)") } })
            if index < 2 { try await until { read.entered.load(ordering: .sequentiallyConsistent) } }
        }
        try await until { turns.waitingReads == 1 }
        #expect(log.entries == ["r0", "r1"])
        reads[0].finish()
        try await until { reads[2].entered.load(ordering: .sequentiallyConsistent) }
        #expect(turns.waitingReads == 0)
        reads[1].finish()
        reads[2].finish()
        for task in tasks { await task.value }
        #expect(log.entries == ["r0", "r1", "r2"])
    }

    @Test("waiting users are served in rotation: one user's many reads delay another's by one read each")
    func rotation() async throws {
        let turns = ReadTurns(width: 1)
        let log = Log()
        let first = HeldRead()
        let holder = Task { await turns.run(as: 1) { await first.body(log: log, name: "a0") } }
        try await until { first.entered.load(ordering: .sequentiallyConsistent) }
        // User 1 queues three reads, then user 2 one: user 2 goes second, not fourth.
        var tasks: [Task<Void, Never>] = []
        for (user, name) in [(UInt32(1), "a1"), (1, "a2"), (1, "a3"), (2, "b1")] {
            let read = HeldRead()
            read.finish()
            let waiting = turns.waitingReads
            tasks.append(Task { await turns.run(as: user) { await read.body(log: log, name: name) } })
            try await until { turns.waitingReads == waiting + 1 }
        }
        first.finish()
        // Every read in before its task is awaited: one never let in fails here, not hangs.
        try await until { log.entries.count == 5 }
        await holder.value
        for task in tasks { await task.value }
        #expect(log.entries == ["a0", "a1", "b1", "a2", "a3"])
    }

    @Test("a read that throws gives its turn on")
    func throwingRead() async {
        struct Failure: Error {}
        let turns = ReadTurns(width: 1)
        await #expect(throws: Failure.self) { () async throws in
            try await turns.run(as: 7) { () async throws(Failure) in throw Failure() }
        }
        let value = await turns.run(as: 7) { 42 }
        #expect(value == 42)
    }
}
