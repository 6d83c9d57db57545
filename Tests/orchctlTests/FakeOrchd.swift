import Dispatch
import FoundationEssentials
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import orchctl

/// A stand-in for orchd on a Unix socket in a temporary directory: it accepts one connection,
/// reads one call, records it, and writes the canned replies (each a JSON object, NUL added),
/// then closes the connection unless `keepOpen`. With `closesUnread`, it reads nothing: once
/// the call has arrived, it closes the connection with the call unread, as an orchd does that
/// stops before it reads a call.
///
/// Its waits are limited, so that a client that misbehaves fails its test instead of hanging
/// it: a call that never ends is given up after 600 s, and a connection kept open is shut down
/// after a minute (the client sees its end).
final class FakeOrchd: Sendable {
    /// The socket's path.
    let socketPath: String
    private let listener: Int32
    private let calls = Mutex<[String]>([])
    private let served = DispatchSemaphore(value: 0)
    /// The connection kept open with `keepOpen`, closed with the fake.
    private let openConnection = Mutex<Int32?>(nil)

    /// Starts listening and serves one connection on another thread.
    init(replies: [String], keepOpen: Bool = false, closesUnread: Bool = false) throws {
        var template = Array("/tmp/orchctl-test-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        let path = directory + "/orchd.sock"
        socketPath = path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 1) == 0 else { throw CommandFailure("fake orchd: cannot listen on \(path)") }
        DispatchQueue(label: "test.fake-orchd").async { [self] in
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var limit = timeval(tv_sec: 600, tv_usec: 0)
            _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            if closesUnread {
                var ready = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 30_000)
                close(connection)
                served.signal()
                return
            }
            var call: [UInt8] = []
            var byte: UInt8 = 0
            while read(connection, &byte, 1) == 1, byte != 0 { call.append(byte) }
            calls.withLock { $0.append(String(decoding: call, as: UTF8.self)) }
            for reply in replies {
                let bytes = Array(reply.utf8) + [0]
                _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            served.signal()
            guard keepOpen else {
                close(connection)
                return
            }
            openConnection.withLock { $0 = connection }
            // Shut down, not closed: the descriptor stays the fake's until it goes.
            DispatchQueue(label: "test.fake-orchd.limit").asyncAfter(deadline: .now() + 600) { [weak self] in
                self?.openConnection.withLock { if let connection = $0 { _ = shutdown(connection, Int32(SHUT_RDWR)) } }
            }
        }
    }

    deinit {
        if let connection = openConnection.withLock({ $0 }) { close(connection) }
        close(listener)
        unlink(socketPath)
        rmdir(String(socketPath.dropLast("/orchd.sock".count)))
    }

    /// The calls received, as JSON text, once the replies were written (or none, failing the
    /// test, when no call has come within 600 s).
    func receivedCalls() -> [String] {
        guard served.wait(timeout: .now() + 600) == .success else {
            Issue.record("the fake orchd served no connection within 600 s")
            return []
        }
        served.signal()
        return calls.withLock { $0 }
    }
}
