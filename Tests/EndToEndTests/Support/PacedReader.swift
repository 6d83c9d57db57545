import Foundation
import Glibc
import Testing
import TestWaitLimits

/// A running `orchctl` whose standard output the test reads itself, in pieces of a chosen
/// size: a reader as slow as the test wants, without sleeps (each piece is one read(2), and
/// whatever the test does between pieces is the pause).
final class PacedReader {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let errorData = LockedData()
    private let errorsDone = DispatchGroup()

    /// Starts `orchctl --socket SOCKET ARGUMENTS`.
    init(_ daemon: TestDaemon, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Binaries.orchctl)
        process.arguments = ["--socket", daemon.socketPath] + arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = errors.fileHandleForReading
        DispatchQueue(label: "test.paced-reader.errors").async(group: errorsDone) { [errorData] in errorData.set(handle.readDataToEndOfFile()) }
    }

    /// Reads one piece of at most `bytes` bytes; empty at the end of the output, and when
    /// nothing came for ``silenceLimit`` seconds (which fails the test).
    func read(upTo bytes: Int, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
        var piece = [UInt8](repeating: 0, count: bytes)
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(Self.silenceLimit * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready == 1 else {
                Issue.record("orchctl wrote nothing for \(Self.silenceLimit) s", sourceLocation: sourceLocation)
                return []
            }
            let count = piece.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return Array(piece[..<max(count, 0)])
        }
    }

    /// How long a read waits for orchctl's next bytes.
    static let silenceLimit = 120

    /// Reads everything to the end of the output in pieces of `bytes`, handing each to `body`.
    func readAll(inPiecesOf bytes: Int, sourceLocation: SourceLocation = #_sourceLocation, _ body: ([UInt8]) throws -> Void) rethrows {
        while true {
            let piece = read(upTo: bytes, sourceLocation: sourceLocation)
            if piece.isEmpty { return }
            try body(piece)
        }
    }

    /// Waits for orchctl to exit and returns its exit status and standard error; one still
    /// running after ``TestDaemon/commandTimeLimit`` is killed, and its standard error says so.
    func finish() -> (status: Int32, standardError: String) {
        let exited = process.waitUntilExit(atMost: TestDaemon.commandTimeLimit)
        let ended = errorsDone.wait(timeout: .now() + 10) == .success
        let note = (exited ? "" : "\n[killed by the test: still running after \(Int(TestDaemon.commandTimeLimit)) s]")
            + (ended ? "" : "\n[standard error still open 10 s after it exited]")
        return (process.terminationStatus, String(decoding: errorData.get(), as: UTF8.self) + note)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
