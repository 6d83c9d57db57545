#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where orchctl writes: standard output and standard error, swappable so tests can capture
/// what a command prints.
struct Console: Sendable {
    /// Writes bytes to standard output, unchanged.
    var writeOutput: @Sendable ([UInt8]) -> Void
    /// Writes bytes to standard error.
    var writeError: @Sendable ([UInt8]) -> Void
    /// Whether standard output is a terminal (tables then fit its width).
    var outputIsTerminal: Bool
    /// The terminal's width in columns, when standard output is one.
    var terminalColumns: Int?
    /// Writes bytes to standard output, unchanged, and returns 0 when all were written, else
    /// the errno that stopped it (`EPIPE` once nothing reads the output any more), so a
    /// command that streams can stop.
    var writeOutputChecked: @Sendable ([UInt8]) -> Int32
    /// The file descriptor standard output goes to when this console writes to the process's
    /// own (so a command can watch for its reader going away); `nil` for captured output.
    var outputDescriptor: Int32?

    /// Creates a console; `writeOutputChecked` defaults to `writeOutput`, reporting success.
    init(
        writeOutput: @escaping @Sendable ([UInt8]) -> Void,
        writeError: @escaping @Sendable ([UInt8]) -> Void,
        outputIsTerminal: Bool,
        terminalColumns: Int?,
        writeOutputChecked: (@Sendable ([UInt8]) -> Int32)? = nil,
        outputDescriptor: Int32? = nil
    ) {
        self.writeOutput = writeOutput
        self.writeError = writeError
        self.outputIsTerminal = outputIsTerminal
        self.terminalColumns = terminalColumns
        self.writeOutputChecked = writeOutputChecked ?? { bytes in
            writeOutput(bytes)
            return 0
        }
        self.outputDescriptor = outputDescriptor
    }

    /// The first errno a write to the process's standard output failed with (0 when none):
    /// output lost to a full disk or a closed descriptor makes orchctl exit non-zero, as
    /// coreutils do, so that `id=$(orchctl submit ...)` cannot pass with no ID. `EPIPE` is
    /// not kept: a reader that stopped reading (`| head`) chose to.
    static let standardOutputFailure = Atomic<Int32>(0)

    /// The process's own file descriptors 1 and 2, written with write(2) so output is
    /// byte-exact and unbuffered (no stdio buffer to lose on exit).
    static var standard: Console {
        var size = winsize()
        let isTerminal = isatty(1) == 1
        let columns = isTerminal && ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : nil
        return Console(
            writeOutput: { bytes in
                let code = writeAll(1, bytes)
                if code != 0 && code != EPIPE {
                    _ = standardOutputFailure.compareExchange(expected: 0, desired: code, ordering: .relaxed)
                }
            },
            writeError: { _ = writeAll(2, $0) },
            outputIsTerminal: isTerminal,
            terminalColumns: columns,
            writeOutputChecked: { writeAll(1, $0) },
            outputDescriptor: 1)
    }

    /// Prints `text` and a newline to standard output.
    func print(_ text: String) {
        writeOutput(Array((text + "\n").utf8))
    }

    /// Prints `text` to standard output as is.
    func write(_ text: String) {
        writeOutput(Array(text.utf8))
    }

    /// Prints `text` and a newline to standard error.
    func printError(_ text: String) {
        writeError(Array((text + "\n").utf8))
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`; gives up on other
    /// errors (a closed pipe, as with `orchctl logs 7 | head`).
    /// - Returns: 0 when everything was written, else the errno that stopped it.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            written += n
        }
        return 0
    }
}
