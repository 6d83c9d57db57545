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
        // Syslog priorities grow as severity falls: write when at or below the threshold.
        guard level.rawValue <= threshold.load(ordering: .relaxed) else { return nil }
        // The journal stamps lines itself; a plain log file needs the time on each line.
        return toJournal
            ? "<\(level.rawValue)>\(message())\n"
            : "\(Timestamp.format(Date())) orchd: \(level.name): \(message())\n"
    }

    /// Writes whole lines made by ``line(_:_:)`` to stderr in as few write(2) calls as the
    /// kernel allows (one, unless it takes part of them); a failed write drops the rest, as a
    /// log line that cannot be written has nowhere else to go.
    static func write(lines bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
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
}
