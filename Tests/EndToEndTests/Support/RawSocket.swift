import Foundation
import Glibc

/// A bare Unix stream connection for sending the daemon bytes no well-behaved client would.
final class RawSocket {
    private let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw TestFailure("connect \(path): errno \(errno)") }
    }

    deinit {
        close(fd)
    }

    /// Sends bytes; returns false once the daemon has closed the connection.
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
