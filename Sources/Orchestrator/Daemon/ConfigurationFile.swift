import Foundation
import Glibc
import OrchestratorAPI

/// orchd's configuration file: `key = value` lines, `#` starts a comment, blank lines are
/// ignored. Keys are the long flag names without `--`: `concurrency`, `kill-grace`,
/// `log-level`. Flags given on the command line override the file.
///
/// ```
/// # /etc/orchd/orchd.conf
/// concurrency = 4
/// kill-grace = 10s
/// log-level = info
/// ```
///
/// A queue's executor is set with `queue.NAME.` keys (`slurm-option` may be repeated; each
/// line adds one sbatch option):
///
/// ```
/// queue.hpc.executor = slurm
/// queue.hpc.slurm-partition = batch
/// queue.hpc.slurm-option = --mem=2G
/// ```
public enum ConfigurationFile {
    /// Reads and parses the file at `path`.
    /// - Parameters:
    ///   - path: the file.
    ///   - required: whether a missing file is an error (`--config` given) or means "no
    ///     settings" (the default path).
    /// - Returns: the settings the file gives.
    /// - Throws: ``ConfigurationFileError`` when the file cannot be read or has a bad line.
    public static func load(path: String, required: Bool) throws(ConfigurationFileError) -> DaemonSettings {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && !required { return DaemonSettings() }
            throw .unreadable(path: path, errno: code)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            // A configuration file is a few lines; refuse to slurp something huge by mistake.
            if bytes.count > 1 << 20 { throw .unreadable(path: path, errno: EFBIG) }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .invalidLine(path: path, line: 1, reason: "the file is not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    /// Parses the text of a configuration file.
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - path: the file's name, for error messages.
    ///   Lines may end in LF or CRLF (a file written on Windows). A key given twice is refused,
    ///   naming both lines: which one was meant is not for orchd to guess.
    /// - Throws: ``ConfigurationFileError`` naming the first bad line.
    public static func parse(_ text: String, path: String) throws(ConfigurationFileError) -> DaemonSettings {
        var settings = DaemonSettings()
        var seen: [String: Int] = [:]
        // "\r\n" is one Character in Swift, so it is named as a separator of its own.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let number = index + 1
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let content = line.trimmingCharacters(in: .whitespaces)
            if content.isEmpty { continue }
            guard let equals = content.firstIndex(of: "=") else {
                throw .invalidLine(path: path, line: number, reason: "expected 'key = value', got '\(content.visible)'")
            }
            let key = content[..<equals].trimmingCharacters(in: .whitespaces)
            let value = content[content.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if key.hasPrefix(queuePrefix) {
                let repeatable = key.hasSuffix(".slurm-option")
                if !repeatable, let first = seen[key] {
                    throw .invalidLine(path: path, line: number, reason: "'\(key.visible)' is set again (first on line \(first)); give each key once")
                }
                seen[key] = seen[key] ?? number
                if let problem = applyQueueSetting(key: key, value: value, to: &settings) {
                    throw .invalidLine(path: path, line: number, reason: problem)
                }
                continue
            }
            guard let setting = DaemonSetting(rawValue: key) else {
                let known = DaemonSetting.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidLine(path: path, line: number, reason: "unknown key '\(key.visible)' (known keys: \(known))")
            }
            if let first = seen[key] {
                throw .invalidLine(path: path, line: number, reason: "'\(key)' is set again (first on line \(first)); give each key once")
            }
            seen[key] = number
            if let problem = setting.apply(value, to: &settings) {
                throw .invalidLine(path: path, line: number, reason: "invalid value '\(value.visible)' for '\(key)': \(problem)")
            }
        }
        return settings
    }

    /// The prefix of a queue's keys: `queue.NAME.SETTING`.
    static let queuePrefix = "queue."

    /// Applies one `queue.NAME.SETTING = value` line.
    /// - Returns: `nil` when applied, else what is wrong.
    static func applyQueueSetting(key: String, value: String, to settings: inout DaemonSettings) -> String? {
        let rest = key.dropFirst(queuePrefix.count)
        guard let dot = rest.lastIndex(of: "."), let name = QueueName(rawValue: String(rest[..<dot])) else {
            return "'\(key.visible)' is not 'queue.NAME.SETTING' with a queue name (1-64 characters of A-Z a-z 0-9 . _ -)"
        }
        var change = settings.queueExecutors[name] ?? QueueExecutorSettings.Change()
        switch rest[rest.index(after: dot)...] {
        case "executor": change.executor = value
        case "slurm-partition": change.slurmPartition = value
        case "slurm-option":
            guard !value.isEmpty else { return "'\(key.visible)' needs an sbatch option, e.g. --mem=2G" }
            change.slurmOptions = (change.slurmOptions ?? []) + [value]
        case let other:
            return "unknown queue setting '\(String(other).visible)' in '\(key.visible)' (known: executor, slurm-partition, slurm-option)"
        }
        if let problem = change.problem { return "invalid value '\(value.visible)' for '\(key.visible)': \(problem)" }
        settings.queueExecutors[name] = change
        return nil
    }

}
