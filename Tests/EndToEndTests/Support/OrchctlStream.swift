import Foundation
import Glibc
import Testing
import TestWaitLimits

/// A running `orchctl` whose standard output the test reads as it comes (`events --follow`,
/// `logs --follow`), with poll(2) and a timeout, so nothing depends on timing.
final class OrchctlStream {
    let process = Process()
    private let output = Pipe()
    private var buffer = Data()
    /// Standard error, when captured.
    private let errors: Pipe?
    private var errorBuffer = Data()

    /// Starts `orchctl --socket SOCKET ARGUMENTS`, as `user` when one is given.
    /// - Parameter captureErrors: read standard error with ``nextErrorLine(timeout:)``
    ///   (otherwise it goes to /dev/null).
    init(_ daemon: TestDaemon, _ arguments: [String], as user: TestUser? = nil, captureErrors: Bool = false) throws {
        let command = ["--socket", daemon.socketPath] + arguments
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--", Binaries.orchctl] + command
            process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        } else {
            process.executableURL = URL(fileURLWithPath: Binaries.orchctl)
            process.arguments = command
        }
        process.standardOutput = output
        errors = captureErrors ? Pipe() : nil
        process.standardError = errors ?? FileHandle.nullDevice
        try process.run()
    }

    /// The next line of standard error (see `captureErrors`), or `nil` when none arrives
    /// within `timeout` seconds or it ends.
    func nextErrorLine(timeout: Double = 20) -> String? {
        guard let fd = errors?.fileHandleForReading.fileDescriptor else { return nil }
        while true {
            if let newline = errorBuffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: errorBuffer[errorBuffer.startIndex..<newline], as: UTF8.self)
                errorBuffer.removeSubrange(errorBuffer.startIndex...newline)
                return line
            }
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pollFD, 1, Int32(timeout * 1000)) == 1 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            errorBuffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The next line, or `nil` when none arrives within `timeout` seconds or the output ends.
    func nextLine(timeout: Double = 20) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            guard readMore(timeout: timeout) else { return nil }
        }
    }

    /// Everything left until orchctl closes its output, or `nil` when it does not within
    /// `timeout` seconds.
    func rest(timeout: Double = 20) -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pollFD, 1, Int32(timeout * 1000)) == 1 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 {
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Waits for orchctl to exit (after its output ended) and returns its exit status; one
    /// still running after ``TestDaemon/commandTimeLimit`` is killed, failing the test.
    func exitStatus(sourceLocation: SourceLocation = #_sourceLocation) -> Int32 {
        if !process.waitUntilExit(atMost: TestDaemon.commandTimeLimit) {
            Issue.record("orchctl \((process.arguments ?? []).joined(separator: " ")) still ran after \(Int(TestDaemon.commandTimeLimit)) s: killed",
                         sourceLocation: sourceLocation)
        }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Reads what is available; `false` at the end of the output or after `timeout` seconds.
    private func readMore(timeout: Double) -> Bool {
        let fd = output.fileHandleForReading.fileDescriptor
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollFD, 1, Int32(timeout * 1000)) == 1 else { return false }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}
