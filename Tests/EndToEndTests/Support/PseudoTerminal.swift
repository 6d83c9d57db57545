import CPosix
import Foundation
import Glibc
import TestWaitLimits

/// Runs a program with its standard output on a new pseudo-terminal of a given width, as a
/// user's terminal would be, and returns what it wrote (carriage returns the terminal adds
/// removed). Standard error goes to a pipe.
enum PseudoTerminal {
    /// Runs `path` with `arguments` on a terminal `columns` wide; returns its exit status,
    /// the terminal output and standard error.
    static func run(
        _ path: String, _ arguments: [String], columns: UInt16, environment: [String: String],
        typing: (after: String, keys: String)? = nil, steps: [(after: String, action: () throws -> String)] = []
    ) throws -> (status: Int32, output: String, errors: String) {
        // Each step runs once its text has appeared (after what the step before wrote), and
        // its result is typed.
        var steps = steps
        if let typing { steps.insert((typing.after, { typing.keys }), at: 0) }
        var nameBuffer = [CChar](repeating: 0, count: 128)
        let master = cposix_open_pseudo_terminal(&nameBuffer, UInt(nameBuffer.count))
        guard master >= 0 else { throw TestFailure("cannot open a pseudo-terminal: \(errno)") }
        let name = String(decoding: nameBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { close(master) }
        var size = winsize(ws_row: 40, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        guard ioctl(master, UInt(TIOCSWINSZ), &size) == 0 else { throw TestFailure("TIOCSWINSZ: \(errno)") }
        let slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw TestFailure("open \(name): \(errno)") }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        let errors = Pipe()
        process.standardError = errors
        // With keys to type, the terminal is standard input too, as for a user.
        process.standardInput = steps.isEmpty ? FileHandle.nullDevice : FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        try process.run()
        // Only the child holds the terminal open now: reading ends with EIO once it exits.
        close(slave)
        var output = Data()
        var seen = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        // A program that never exits (a top that redraws for ever) is killed after the limit.
        let exited = try waiting(for: process.processIdentifier, atMost: TestDaemon.commandTimeLimit) {
            while true {
                var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 30_000) == 1 else { break }
                let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                output.append(contentsOf: buffer[..<count])
                if let step = steps.first, String(decoding: output[seen...], as: UTF8.self).contains(step.after) {
                    steps.removeFirst()
                    seen = output.count
                    let keys = try step.action()
                    _ = keys.withCString { write(master, $0, strlen($0)) }
                }
            }
            process.waitUntilExit()
        }
        let killedNote = exited ? "" : "\n[killed by the test: still running after \(Int(TestDaemon.commandTimeLimit)) s]"
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) + killedNote
        // The terminal turns each "\n" into "\r\n" (onlcr).
        let text = String(decoding: output.filter { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        return (process.terminationStatus, text, errorText)
    }

    /// The columns `text` takes on a terminal, for the characters these tests use: CJK,
    /// Hangul, fullwidth forms and the emoji here take two; SGR colour sequences none.
    static func displayWidth(_ text: some StringProtocol) -> Int {
        var width = 0
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                if scalar == "m" { inEscape = false }
                continue
            }
            if scalar == "\u{1B}" {
                inEscape = true
                continue
            }
            switch scalar.value {
            case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7A3,
                 0xFF00...0xFF60, 0x1F300...0x1F64F, 0x1F680...0x1F6FF:
                width += 2
            default:
                width += 1
            }
        }
        return width
    }
}
