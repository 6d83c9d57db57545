import Foundation
import Glibc
import OrchestratorAPI
import Synchronization

/// The daemon's own diagnostics, written to stderr one line each.
///
/// Under systemd (`$JOURNAL_STREAM` set) each line starts with its syslog priority in the
/// `<N>` form journald understands (sd-daemon(3)), so `journalctl -p warning` filters them.
public enum DaemonLog {
    /// How much is written; a message is written when its level is at or above this.
    public enum Level: Int, Sendable, CaseIterable {
        case debug = 7, info = 6, warning = 4, error = 3

        /// Parses `debug`, `info`, `warning` or `error`.
        public init?(name: String) {
            switch name {
            case "debug": self = .debug
            case "info": self = .info
            case "warning": self = .warning
            case "error": self = .error
            default: return nil
            }
        }

        var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    private static let threshold = Atomic<Int>(Level.info.rawValue)
    private static let toJournal = getenv("JOURNAL_STREAM") != nil

    /// Sets the lowest level written.
    public static func setLevel(_ level: Level) {
        threshold.store(level.rawValue, ordering: .relaxed)
    }

    /// Whether a message at `level` is written at the level in force: also for messages that
    /// go out another way than ``line(_:_:)``, such as journal entries.
    static func logs(_ level: Level) -> Bool {
        // Syslog priorities grow as severity falls: written when at or below the threshold.
        level.rawValue <= threshold.load(ordering: .relaxed)
    }

    public static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }
    public static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message) }

    private static func write(_ level: Level, _ message: () -> String) {
        guard let line = line(level, message) else { return }
        write(lines: Array(line.utf8))
    }

    /// The line ``info(_:)`` (and its siblings) would write for `message` at `level`, newline
    /// included, or `nil` when `level` is below the threshold; for a caller that gathers many
    /// lines into one ``write(lines:)``.
    static func line(_ level: Level, _ message: () -> String) -> String? {
        guard logs(level) else { return nil }
        // The journal stamps lines itself; a plain log file needs the time on each line.
        return toJournal
            ? "<\(level.rawValue)>\(message())\n"
            : "\(stamp(Date())) orchd: \(level.name): \(message())\n"
    }

    /// The last time stamp written, by its millisecond: the lines of one event delivery share
    /// it, and formatting the date again was a quarter of writing a line.
    private static let lastStamp = Mutex<(millisecond: Int64, text: String)>((.min, ""))

    /// `Timestamp.format(date)`, reusing the text of the same millisecond.
    static func stamp(_ date: Date) -> String {
        let microseconds = Timestamp.microseconds(date)
        // As Timestamp.format cuts it: towards the earlier millisecond.
        let millisecond = microseconds >= 0 ? microseconds / 1000 : (microseconds - 999) / 1000
        return lastStamp.withLock { last in
            if last.millisecond != millisecond { last = (millisecond, Timestamp.format(date)) }
            return last.text
        }
    }

    /// Writes lines made by ``line(_:_:)`` to stderr in pieces of whole lines of at most
    /// `PIPE_BUF` bytes each (4,096 on Linux), which a pipe takes whole or not at all (pipe(7)):
    /// a log reader that falls behind a non-blocking pipe loses whole lines, as when each line
    /// was written alone, and never gets half of one. A piece the kernel refuses (`EAGAIN`) is
    /// dropped, as a log line that cannot be written has nowhere else to go.
    static func write(lines bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            for piece in pieces(of: buffer, limit: Int(PIPE_BUF)) {
                writeWhole(UnsafeBufferPointer(rebasing: buffer[piece]))
            }
        }
    }

    /// `bytes` cut after newlines into consecutive pieces of at most `limit` bytes; a line
    /// longer than `limit` is a piece of its own, and bytes after the last newline are the
    /// last piece.
    static func pieces(of bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> [Range<Int>] {
        var pieces: [Range<Int>] = []
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count {
                let lineEnd = (bytes[end...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count - 1) + 1
                if lineEnd - start > limit && end > start { break }
                end = lineEnd
            }
            pieces.append(start..<end)
            start = end
        }
        return pieces
    }

    /// Writes `piece` to stderr, resuming after a partial write; gives up at an error.
    private static func writeWhole(_ piece: UnsafeBufferPointer<UInt8>) {
        guard let base = piece.baseAddress else { return }
        var offset = 0
        while offset < piece.count {
            let written = Glibc.write(STDERR_FILENO, base + offset, piece.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
