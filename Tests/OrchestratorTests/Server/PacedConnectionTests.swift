import Foundation
import Glibc
import OrchestratorAPI
import Synchronization
import Testing

@testable import Orchestrator

/// A real ``VarlinkConnection`` over a socket pair, streaming more than its outbox cap to a
/// client that reads in small pieces.
@Suite("Paced connection")
struct PacedConnectionTests {
    /// `test.Paced.Stream`: `count` replies of `bytes` bytes each, paced by a ``ReplyPacer``;
    /// records how many bytes it has handed to the connection.
    struct StreamHandler: VarlinkMethodHandler {
        static let method = VarlinkMethod<VarlinkNoParameters, Chunk>("test.Paced.Stream", requiresMore: true)
        struct Chunk: Codable, Sendable { var data: String }
        let count: Int
        let bytes: Int
        let produced: Produced

        final class Produced: Sendable {
            let bytes = Atomic<Int>(0)
        }

        func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
            let chunk = String(repeating: "a", count: bytes)
            let sent = Mutex(0)
            let count = self.count
            let produced = self.produced
            let box = SentBox(sent: sent)
            ReplyPacer(responder: responder, step: { done in
                let number = box.next()
                produced.bytes.wrappingAdd(chunk.utf8.count + 32, ordering: .relaxed)
                responder.reply(Chunk(data: chunk), continues: number < count)
                done(number < count ? .more : .finished)
            }).start()
        }

        /// Steps never overlap; the lock publishes the count between queues.
        final class SentBox: Sendable {
            let sent: Mutex<Int>
            init(sent: consuming Mutex<Int>) { self.sent = sent }
            func next() -> Int { sent.withLock { $0 += 1; return $0 } }
        }
    }

    /// `test.Paced.Huge`: one reply of `bytes` bytes, without `more`.
    struct HugeHandler: VarlinkMethodHandler {
        static let method = VarlinkMethod<VarlinkNoParameters, StreamHandler.Chunk>("test.Paced.Huge")
        let bytes: Int

        func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
            responder.reply(StreamHandler.Chunk(data: String(repeating: "b", count: bytes)))
        }
    }

    @Test("one user's connections together hold at most their budget of unfinished calls: the one that would pass it is refused and closed, and what they held is counted off as calls end and connections close")
    func userBufferBudget() throws {
        let budget = UserBufferBudget(limit: 2 << 20)
        let service = VarlinkService(handlers: [PingHandler()], policy: { AccessPolicy(daemonUID: getuid()) })
        let peer = PeerCredentials(pid: getpid(), uid: 4321, gid: 4321)
        // A Ping whose parameters are padded with spaces, sent without its end.
        let head = Array(#"{"method":"io.orchd.Manager.Ping","parameters":{"#.utf8) + [UInt8](repeating: 32, count: 900_000)
        var clients: [Int32] = []
        var connections: [VarlinkConnection] = []
        let closed = DispatchGroup()
        defer {
            for connection in connections { connection.close() }
            for client in clients { close(client) }
        }
        for index in 0..<3 {
            var fds: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            try #require(Self.limitReceiveWait(fds[1]) && Self.limitSendWait(fds[1]))
            closed.enter()
            let connection = VarlinkConnection(
                fd: fds[0], peer: peer, service: service, maximumMessageBytes: 1 << 20, bufferBudget: budget,
                onClose: { _ in closed.leave() })
            connection.start()
            clients.append(fds[1])
            connections.append(connection)
            var sent = 0
            while sent < head.count {
                let n = head[sent...].withUnsafeBytes { send(fds[1], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { break }
                sent += n
            }
            // The next starts once this one's call is counted: which connection passes the
            // budget must not depend on which of them orchd reads first. With the second
            // refused instead of the third, the read below used to wait for ever.
            guard index < 2 else { continue }
            let counted = (index + 1) * head.count
            try #require(Self.eventually { budget.bytes(of: 4321) == counted }, "\(budget.bytes(of: 4321)) bytes counted, not \(counted)")
        }
        // The third passes 2 MiB with its message: it gets an error and its end.
        let third = readAll(clients[2])
        #expect(third.contains("io.orchd.Manager.MessageTooLarge") && third.contains("uid 4321's connections hold more than 2 MiB of calls orchd has not handled yet"), "\(third)")
        // The first ends its call: answered, and no longer counted.
        let end = Array("}}".utf8) + [0]
        #expect(end.withUnsafeBytes { send(clients[0], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == end.count)
        var reply = [UInt8](repeating: 0, count: 256)
        #expect(reply.withUnsafeMutableBytes { recv(clients[0], $0.baseAddress, $0.count, 0) } > 0)
        #expect(budget.bytes(of: 4321) > 0, "the second still holds what it read of its unfinished call")
        for connection in connections { connection.close() }
        // Each counts off what it held as it closes, before its close is reported.
        #expect(closed.wait(timeout: .now() + 10) == .success)
        #expect(budget.bytes(of: 4321) == 0)
    }

    @Test("replies a user does not read count in their budget: the connection whose reply passes it is dropped, and what it held is counted off")
    func unreadRepliesCountInTheBudget() throws {
        let budget = UserBufferBudget(limit: 2 << 20)
        let service = VarlinkService(handlers: [HugeHandler(bytes: 600_000)], policy: { AccessPolicy(daemonUID: getuid()) })
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        try #require(Self.limitReceiveWait(fds[1]))
        let closed = DispatchSemaphore(value: 0)
        let connection = VarlinkConnection(
            fd: fds[0], peer: PeerCredentials(pid: getpid(), uid: 4321, gid: 4321), service: service,
            maximumMessageBytes: 1 << 20, bufferBudget: budget, onClose: { _ in closed.signal() })
        connection.start()
        defer { connection.close() }
        // Ten replies of 600 KB asked for, none read: 6 MB against a budget of 2 MiB.
        let calls = Array(repeating: Array(#"{"method":"test.Paced.Huge"}"#.utf8) + [0], count: 10).flatMap { $0 }
        #expect(calls.withUnsafeBytes { send(fds[1], $0.baseAddress, $0.count, 0) } == calls.count)
        #expect(closed.wait(timeout: .now() + 30) == .success, "the client was dropped")
        #expect(budget.bytes(of: 4321) == 0)
    }

    /// Makes a blocking read of `fd` give up after 600 s, so that a reply that never comes fails
    /// the test instead of holding up the run; whether that was set.
    static func limitReceiveWait(_ fd: Int32) -> Bool {
        var limit = timeval(tv_sec: 600, tv_usec: 0)
        return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0
    }

    /// Makes a blocking send on `fd` give up after 600 s, so that a connection that stops
    /// reading fails the test instead of holding up the run; whether that was set.
    static func limitSendWait(_ fd: Int32) -> Bool {
        var limit = timeval(tv_sec: 600, tv_usec: 0)
        return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0
    }

    /// Whether `condition` holds within 60 s; asked every millisecond, as the connection's
    /// reading tells no one.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            usleep(1000)
        }
        return true
    }

    /// Reads from `fd` until the peer closes it (or a read waits past its limit); the text read.
    private func readAll(_ fd: Int32) -> String {
        var data: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = piece.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return String(decoding: data, as: UTF8.self) }
            data += piece[..<n]
        }
    }

    @Test("a single reply past the outbox cap becomes a ReplyTooLarge error, and the connection goes on")
    func replyTooLarge() throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let client = fds[1]
        defer { close(client) }
        try #require(Self.limitReceiveWait(client))
        let service = VarlinkService(
            handlers: [HugeHandler(bytes: VarlinkConnection.maximumOutboxBytes), PingHandler()], policy: { AccessPolicy(daemonUID: getuid()) })
        let connection = VarlinkConnection(
            fd: fds[0], peer: PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()), service: service,
            maximumMessageBytes: 1 << 20, onClose: { _ in })
        connection.start()
        defer { connection.close() }
        let calls = Array(#"{"method":"test.Paced.Huge"}"#.utf8) + [0] + Array(#"{"method":"io.orchd.Manager.Ping"}"#.utf8) + [0]
        #expect(calls.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) } == calls.count)
        var decoder = VarlinkFrameDecoder(maximumMessageBytes: 1 << 20)
        var messages: [String] = []
        var piece = [UInt8](repeating: 0, count: 4096)
        while messages.count < 2 {
            let n = piece.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            try #require(n > 0, "the connection was closed after \(messages)")
            messages += try decoder.append(piece[..<n]).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(messages[0].contains(#""error":"io.orchd.Manager.ReplyTooLarge""#) && messages[0].contains("more"), "\(messages[0])")
        #expect(!messages[1].contains("error"), "the next call is answered: \(messages[1])")
    }

    @Test("a stream longer than the outbox cap reaches a slow reader whole, never far ahead of it")
    func slowReaderGetsEverything() throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let client = fds[1]
        defer { close(client) }
        try #require(Self.limitReceiveWait(client))
        let count = 300
        let bytes = 256 * 1024  // 75 MiB in all, past the 64 MiB cap
        #expect(count * bytes > VarlinkConnection.maximumOutboxBytes)
        let produced = StreamHandler.Produced()
        let service = VarlinkService(handlers: [StreamHandler(count: count, bytes: bytes, produced: produced)], policy: { AccessPolicy(daemonUID: getuid()) })
        let closed = DispatchSemaphore(value: 0)
        let connection = VarlinkConnection(
            fd: fds[0], peer: PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()), service: service,
            maximumMessageBytes: 1 << 20, onClose: { _ in closed.signal() })
        connection.start()

        let call = Array(#"{"method":"test.Paced.Stream","more":true}"#.utf8) + [0]
        #expect(call.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) } == call.count)
        // The most that may be produced but not read: the outbox up to its low-water mark, a
        // reply past it, one step in flight, and what the two socket buffers hold.
        var bufferBytes: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(client, SOL_SOCKET, SO_RCVBUF, &bufferBytes, &length)
        let slack = VarlinkConnection.lowWaterBytes + 3 * (bytes + 64) + 4 * Int(bufferBytes)

        var decoder = VarlinkFrameDecoder(maximumMessageBytes: 1 << 20)
        var consumed = 0
        var replies = 0
        var finished = false
        var ahead = 0
        var piece = [UInt8](repeating: 0, count: 16 * 1024)
        while !finished {
            let n = piece.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            try #require(n > 0, "the connection was closed after \(replies) replies")
            consumed += n
            ahead = max(ahead, produced.bytes.load(ordering: .relaxed) - consumed)
            for message in try decoder.append(piece[..<n]) {
                replies += 1
                finished = !String(decoding: message, as: UTF8.self).contains(#""continues":true"#)
            }
        }
        #expect(replies == count)
        #expect(ahead <= slack, "the producer ran \(ahead) bytes ahead of the reader")
        connection.close()
        #expect(closed.wait(timeout: .now() + 30) == .success, "the close was reported")
    }
}
