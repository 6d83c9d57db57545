import Foundation
import Glibc

/// A bare Unix stream connection for sending the daemon bytes no well-behaved client would.
final class RawSocket {
    private let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        // A blocking send, and a connect to a full backlog, give up after 5 minutes: a daemon
        // that stopped reading fails the test instead of holding it for ever.
        var limit = timeval(tv_sec: 300, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnixAddress(path) { connect(fd, $0, $1) }
        guard result == 0 else { throw TestFailure("connect \(path): errno \(errno)") }
    }

    deinit {
        close(fd)
    }

    /// Sends bytes; returns false once the daemon has closed the connection, or has taken none
    /// for a minute.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Shuts down the sending side (shutdown(2) with `SHUT_WR`), as `nc -N` does after its
    /// input: the daemon reads the end of the stream, and replies still come.
    func shutdownWrite() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Sends `bytes` without blocking, until all are sent or the socket has had no room for
    /// `stall` seconds (the peer stopped reading).
    /// - Returns: how many bytes were sent.
    func send(_ bytes: [UInt8], stallingAfter stall: Double) -> Int {
        var offset = 0
        while offset < bytes.count {
            var pollFD = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&pollFD, 1, Int32(stall * 1000)) == 1 else { break }
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                break
            }
            offset += sent
        }
        return offset
    }

    /// Sends `bytes` while reading what arrives, until all are sent and `count` messages have
    /// arrived, the peer closes, or `timeout` seconds pass.
    /// - Returns: the messages received.
    func exchange(_ bytes: ArraySlice<UInt8>, until count: Int, timeout: Double = 60) -> [String] {
        var offset = bytes.startIndex
        var data: [UInt8] = []
        var received = 0
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while received < count, Date() < deadline {
            let events = offset < bytes.endIndex ? POLLIN | POLLOUT : POLLIN
            var pollFD = pollfd(fd: fd, events: Int16(events), revents: 0)
            guard poll(&pollFD, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) == 1 else { break }
            if pollFD.revents & Int16(POLLIN) != 0 {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n == 0 { break }
                if n > 0 {
                    data += buffer[..<n]
                    received += buffer[..<n].filter { $0 == 0 }.count
                }
            }
            if pollFD.revents & Int16(POLLOUT) != 0, offset < bytes.endIndex {
                let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if sent > 0 { offset += sent }
            }
            if pollFD.revents & Int16(POLLHUP | POLLERR) != 0, pollFD.revents & Int16(POLLIN) == 0 { break }
        }
        return Self.split(data)
    }

    /// Reads until the peer closes or `timeout` seconds pass; returns the NUL-separated messages.
    /// Waits until something arrives to read (or the peer closes), without reading it.
    /// - Parameter timeout: the longest wait, in seconds.
    /// - Returns: whether it did.
    func waitReadable(timeout: Double) -> Bool {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pollFD, 1, Int32(timeout * 1000)) == 1
    }

    func readMessages(untilClosed: Bool, timeout: Double = 10) -> (messages: [String], closed: Bool) {
        var data: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pollFD, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) == 1 else { break }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 {
                return (Self.split(data), true)
            }
            data += buffer[..<count]
            if !untilClosed, data.last == 0 { break }
        }
        return (Self.split(data), false)
    }

    private static func split(_ data: [UInt8]) -> [String] {
        data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}
