import Foundation
import Glibc

/// A datagram socket standing in for systemd's notification socket: the daemon under test
/// gets its path as `$NOTIFY_SOCKET` and sends its sd_notify(3) messages here.
///
/// Like systemd, it reads all the time (on its own thread), not only while a test waits: a
/// Unix datagram socket queues only a limited number of messages (`net.unix.max_dgram_qlen`
/// and the receive buffer bound it), and a full queue would hold the daemon's sender.
final class NotifyListener {
    let path: String
    private let inbox: Inbox

    init(path: String) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let result = withUnixAddress(path) { bind(fd, $0, $1) }
        var stopPipe: [Int32] = [-1, -1]
        guard result == 0, socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &stopPipe) == 0 else {
            let error = POSIXError(.init(rawValue: errno) ?? .EIO)
            close(fd)
            throw error
        }
        let inbox = Inbox(fd: fd, stopRead: stopPipe[0], stopWrite: stopPipe[1])
        self.inbox = inbox
        Thread { inbox.readUntilStopped() }.start()
    }

    deinit {
        inbox.stopReading()
    }

    /// Stops reading the socket, leaving it bound: a service manager that no longer reads,
    /// whose queue fills after `net.unix.max_dgram_qlen` messages.
    func stopReading() {
        inbox.stopReading()
    }

    /// The socket and what was read from it, shared with the reading thread (which must not
    /// hold the listener, or it would never be released). Its descriptors close when the
    /// last of the two lets go.
    private final class Inbox: @unchecked Sendable {  // `received` and `isStopping` are guarded by `condition`; the descriptors are fixed at init.
        let fd: Int32
        /// Written to by `stopReading()` to end the reading thread.
        let stopRead: Int32, stopWrite: Int32
        let condition = NSCondition()
        var received: [String] = []
        var isStopping = false

        init(fd: Int32, stopRead: Int32, stopWrite: Int32) {
            self.fd = fd
            self.stopRead = stopRead
            self.stopWrite = stopWrite
        }

        deinit {
            close(fd)
            close(stopRead)
            close(stopWrite)
        }

        /// Reads every message into `received` until `stopReading()`.
        func readUntilStopped() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var pollFDs = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
                if poll(&pollFDs, 2, -1) < 0 { if errno == EINTR { continue } else { return } }
                if pollFDs[1].revents != 0 { return }
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count >= 0 else { continue }
                condition.lock()
                received.append(String(decoding: buffer[..<count], as: UTF8.self))
                condition.broadcast()
                condition.unlock()
            }
        }

        func stopReading() {
            condition.lock()
            defer { condition.unlock() }
            guard !isStopping else { return }
            isStopping = true
            _ = write(stopWrite, "x", 1)
        }
    }

    /// Waits for the next message not yet taken.
    /// - Parameter timeout: the longest wait, in seconds.
    /// - Returns: the message's text, or `nil` when none arrived in time.
    func receive(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        while inbox.received.isEmpty {
            guard inbox.condition.wait(until: deadline) else { break }
        }
        return inbox.received.isEmpty ? nil : inbox.received.removeFirst()
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
