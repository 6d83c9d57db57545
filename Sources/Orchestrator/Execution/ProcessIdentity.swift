import Foundation

/// Facts that identify one process across a daemon restart: the boot it ran in and its start
/// time, so a pid reused by another process is never mistaken for a job's (proc(5)).
public enum ProcessIdentity {
    /// This boot's ID, from `/proc/sys/kernel/random/boot_id`; empty when unreadable.
    public static func currentBootID() -> String {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else {
            return ""
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The start time of process `pid`, in clock ticks after boot: field 22 of
    /// `/proc/PID/stat` (proc(5)).
    /// - Returns: `nil` when no such process exists or the file cannot be parsed.
    public static func startTicks(of pid: Int32) -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let closing = text.lastIndex(of: ")")
        else { return nil }
        // The command name (field 2) may hold spaces and parentheses; fields after the last
        // ')' start at field 3 (state).
        let fields = text[text.index(after: closing)...].split(separator: " ")
        let index = 22 - 3
        guard fields.count > index else { return nil }
        return UInt64(fields[index])
    }
}
