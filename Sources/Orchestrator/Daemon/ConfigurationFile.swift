import CommandLineParsing
import Foundation
import Glibc

/// orchd's configuration file: `key = value` lines, `#` starts a comment, blank lines are
/// ignored. Keys are the long option names without `--` (``DaemonConfiguration/fileKeys``):
/// `concurrency`, `kill-grace`, `log-level`; each value is checked by its option's own
/// declaration, as on the command line. Options given on the command line override the file
/// (``DaemonConfiguration/applying(file:)``).
///
/// ```
/// # /etc/orchd/orchd.conf
/// concurrency = 4
/// kill-grace = 10s
/// log-level = info
/// ```
public enum ConfigurationFile {
    /// Reads and parses the file at `path`.
    /// - Parameters:
    ///   - path: the file.
    ///   - required: whether a missing file is an error (`--config` given) or means "no
    ///     settings" (the default path).
    /// - Returns: the settings the file gives, by key.
    /// - Throws: ``ConfigurationFileError`` when the file cannot be read or has a bad line.
    public static func load(path: String, required: Bool) throws(ConfigurationFileError) -> [String: ParsedValue] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && !required { return [:] }
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
    /// - Returns: the settings the file gives, by key.
    /// - Throws: ``ConfigurationFileError`` naming the first bad line.
    public static func parse(_ text: String, path: String) throws(ConfigurationFileError) -> [String: ParsedValue] {
        var settings: [String: ParsedValue] = [:]
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
            let option = DaemonConfiguration.bindings.first { $0.spec.name == key }?.spec
            guard let option, DaemonConfiguration.fileKeys.contains(key) else {
                let known = DaemonConfiguration.fileKeys.joined(separator: ", ")
                if option != nil {
                    throw .invalidLine(path: path, line: number, reason: "'\(key)' is set on the command line only (--\(key)); known keys: \(known)")
                }
                throw .invalidLine(path: path, line: number, reason: "unknown key '\(key.visible)' (known keys: \(known))")
            }
            if let first = seen[key] {
                throw .invalidLine(path: path, line: number, reason: "'\(key)' is set again (first on line \(first)); give each key once")
            }
            seen[key] = number
            do throws(CommandLineError) {
                settings[key] = try ArgumentParser.value(value, as: option.kind, what: "'\(key)'", placeholder: option.valueName ?? key)
            } catch {
                throw .invalidLine(path: path, line: number, reason: error.message.visible)
            }
        }
        return settings
    }

}
