import Foundation
import Glibc

/// A datagram socket standing in for systemd's notification socket: the daemon under test
/// gets its path as `$NOTIFY_SOCKET` and sends its sd_notify(3) messages here.
final class NotifyListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(fd)
    }

    /// Waits for the next message.
    /// - Parameter timeout: the longest wait, in seconds.
    /// - Returns: the message's text, or `nil` when none arrived in time.
    func receive(timeout: Double) -> String? {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollFD, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// Collects every message that arrives within `seconds`.
    func messages(during seconds: Double) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        var messages: [String] = []
        while deadline.timeIntervalSinceNow > 0, let message = receive(timeout: deadline.timeIntervalSinceNow) {
            messages.append(message)
        }
        return messages
    }

    /// Waits until a message holding the line `assignment` (e.g. `READY=1`) arrives.
    /// - Returns: every message received up to and including that one, or `nil` on timeout.
    func waitFor(_ assignment: String, timeout: Double = 30) -> [String]? {
        let deadline = Date().addingTimeInterval(timeout)
        var messages: [String] = []
        while Date() < deadline {
            guard let message = receive(timeout: deadline.timeIntervalSinceNow) else { return nil }
            messages.append(message)
            if message.split(separator: "\n").contains(Substring(assignment)) { return messages }
        }
        return nil
    }
}
