#if canImport(Glibc)
import Glibc
#endif

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

    /// The process's own file descriptors 1 and 2, written with write(2) so output is
    /// byte-exact and unbuffered (no stdio buffer to lose on exit).
    static var standard: Console {
        var size = winsize()
        let isTerminal = isatty(1) == 1
        let columns = isTerminal && ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : nil
        return Console(
            writeOutput: { writeAll(1, $0) },
            writeError: { writeAll(2, $0) },
            outputIsTerminal: isTerminal,
            terminalColumns: columns)
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

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`; gives up silently
    /// on other errors (a closed pipe, as with `orchctl logs 7 | head`).
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            written += n
        }
    }
}
