import Foundation
import Glibc

/// A named pipe a job writes to when it reaches a point the test waits for: the test blocks
/// in poll(2) until the job writes, so nothing depends on timing.
final class ReadyMarker {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        guard mkfifo(path, 0o600) == 0 else { throw TestFailure("mkfifo \(path): \(errno)") }
        // Non-blocking open of the read end succeeds without a writer.
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("open \(path): \(errno)") }
    }

    deinit {
        close(fd)
    }

    /// Waits until a writer sends a line, and returns it (without the newline).
    /// - Parameter timeout: the longest wait, in seconds.
    func read(timeout: Double = 30) -> String? {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollFD, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
