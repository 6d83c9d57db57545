import Foundation
import Glibc

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
        DispatchQueue.global().async(group: errorsDone) { [errorData] in errorData.set(handle.readDataToEndOfFile()) }
    }

    /// Reads one piece of at most `bytes` bytes; empty at the end of the output.
    func read(upTo bytes: Int) -> [UInt8] {
        var piece = [UInt8](repeating: 0, count: bytes)
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            let count = piece.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return Array(piece[..<max(count, 0)])
        }
    }

    /// Reads everything to the end of the output in pieces of `bytes`, handing each to `body`.
    func readAll(inPiecesOf bytes: Int, _ body: ([UInt8]) throws -> Void) rethrows {
        while true {
            let piece = read(upTo: bytes)
            if piece.isEmpty { return }
            try body(piece)
        }
    }

    /// Waits for orchctl to exit and returns its exit status and standard error.
    func finish() -> (status: Int32, standardError: String) {
        process.waitUntilExit()
        errorsDone.wait()
        return (process.terminationStatus, String(decoding: errorData.get(), as: UTF8.self))
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
