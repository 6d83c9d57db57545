import CommandLineParsing
import Foundation
import Glibc
import OrchestratorAPI

/// orchd's configuration file: `key = value` lines, `#` starts a comment, blank lines are
/// ignored. Keys are the long option names without `--` (``DaemonConfiguration/fileKeys``):
/// `concurrency`, `kill-grace`, `log-level`; each value is checked by its option's own
/// declaration, as on the command line. Options given on the command line override the file
/// (``DaemonConfiguration/applying(file:)``). `queue.NAME = SETTINGS` lines declare queues
/// (``queue(named:from:)``); only the file declares queues this way.
///
/// ```
/// # /etc/orchd/orchd.conf
/// concurrency = 4
/// kill-grace = 10s
/// log-level = info
/// queue.builds = concurrency=2, retry-base=10s, retry-cap=10min
/// queue.hpc = executor=slurm, slurm-partition=batch, slurm-option=--mem=2G
/// ```
public enum ConfigurationFile {
    /// What a file gives: settings by key, each checked by its option's declaration, and the
    /// queues its `queue.NAME` lines declare, in file order.
    public struct Contents: Sendable, Equatable {
        /// The settings, by key (the long option name).
        public var settings: [String: ParsedValue]
        /// The declared queues.
        public var queues: [Scheduler.ConfiguredQueue]

        /// Creates contents; the default is an empty file's.
        public init(settings: [String: ParsedValue] = [:], queues: [Scheduler.ConfiguredQueue] = []) {
            self.settings = settings
            self.queues = queues
        }
    }

    /// The prefix of a key that declares a queue: `queue.NAME`.
    static let queueKeyPrefix = "queue."

    /// The settings a `queue.NAME` line may give.
    static let queueSettings = [
        "concurrency", "retry-base", "retry-cap", "max-running-per-user", "executor", "slurm-partition", "slurm-option",
    ]

    /// Reads and parses the file at `path`.
    /// - Parameters:
    ///   - path: the file.
    ///   - required: whether a missing file is an error (`--config` given) or means "no
    ///     settings" (the default path).
    /// - Returns: what the file gives; an empty ``Contents`` for a missing default file.
    /// - Throws: ``ConfigurationFileError`` when the file cannot be read or has a bad line.
    public static func load(path: String, required: Bool) throws(ConfigurationFileError) -> Contents {
        // Not blocking: opening a named pipe would otherwise wait for a writer, for ever, and
        // a reload with it (SIGHUP, orchctl reload) would never answer.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && !required { return Contents() }
            throw .unreadable(path: path, errno: code)
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, [S_IFIFO, S_IFSOCK].contains(info.st_mode & S_IFMT) {
            throw .notAFile(path: path, kind: DatabaseIdentity.fileKind(info.st_mode))
        }
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
    /// - Returns: what the file gives.
    /// - Throws: ``ConfigurationFileError`` naming the first bad line.
    public static func parse(_ text: String, path: String) throws(ConfigurationFileError) -> Contents {
        var contents = Contents()
        var seen: [String: Int] = [:]
        // A byte order mark, which some editors write at the start of a UTF-8 file, is not
        // part of the first key.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
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
            if key.hasPrefix(queueKeyPrefix) {
                if let first = seen[key] {
                    throw .invalidLine(path: path, line: number, reason: "'\(key.visible)' is set again (first on line \(first)); give each key once")
                }
                seen[key] = number
                switch queue(named: String(key.dropFirst(queueKeyPrefix.count)), from: value) {
                case .success(let queue): contents.queues.append(queue)
                case .failure(let problem): throw .invalidLine(path: path, line: number, reason: problem.message)
                }
                continue
            }
            let option = DaemonConfiguration.bindings.first { $0.spec.name == key }?.spec
            guard let option, DaemonConfiguration.fileKeys.contains(key) else {
                let known = (DaemonConfiguration.fileKeys + ["queue.NAME"]).joined(separator: ", ")
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
                contents.settings[key] = try ArgumentParser.value(value, as: option.kind, what: "'\(key)'", placeholder: option.valueName ?? key)
            } catch {
                throw .invalidLine(path: path, line: number, reason: error.message.visible)
            }
        }
        return contents
    }

    /// Parses the value of a `queue.NAME` line: settings separated by commas, each
    /// `concurrency=N`, `retry-base=SPAN`, `retry-cap=SPAN`, `max-running-per-user=N`,
    /// `executor=local|slurm` or `slurm-partition=P` at most once, and `slurm-option=OPTION`
    /// once per sbatch option (in order; a part without `=` right after one continues that
    /// option after a comma, as in `slurm-option=--nodelist=a,b`); an empty value declares the
    /// queue with the defaults. Settings given replace the stored ones at start-up and at each
    /// reload; the others keep theirs.
    /// - Parameters:
    ///   - nameText: the text after `queue.`.
    ///   - text: the value.
    /// - Returns: the queue, or what is wrong with the line.
    static func queue(named nameText: String, from text: String) -> Result<Scheduler.ConfiguredQueue, QueueLineProblem> {
        guard let name = QueueName(rawValue: nameText) else {
            return .failure(.init("'\(nameText.visible)' is not a queue name: \(QueueName.rule)"))
        }
        let known = queueSettings.joined(separator: ", ")
        var queue = Scheduler.ConfiguredQueue(name: name)
        var seen: Set<String> = []
        var lastWasSlurmOption = false
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
            guard let equals = part.firstIndex(of: "=") else {
                // An sbatch option's own commas (`--nodelist=a,b`).
                if lastWasSlurmOption, var options = queue.executor.slurmOptions, let last = options.popLast() {
                    queue.executor.slurmOptions = options + [last + "," + part]
                    continue
                }
                return .failure(.init("expected 'setting=value' (\(known)), got '\(part.visible)'"))
            }
            let key = part[..<equals].trimmingCharacters(in: .whitespaces)
            let value = part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            lastWasSlurmOption = key == "slurm-option"
            guard seen.insert(key).inserted || key == "slurm-option" else { return .failure(.init("'\(key.visible)' is given twice")) }
            switch key {
            case "executor":
                queue.executor.executor = value
            case "slurm-partition":
                queue.executor.slurmPartition = value
            case "slurm-option":
                guard !value.isEmpty else { return .failure(.init("slurm-option needs an sbatch option, e.g. slurm-option=--mem=2G")) }
                queue.executor.slurmOptions = (queue.executor.slurmOptions ?? []) + [value]
            case "concurrency":
                guard let number = Int(value), (1...10_000).contains(number) else {
                    return .failure(.init("invalid concurrency '\(value.visible)': expected a whole number from 1 to 10000"))
                }
                queue.concurrency = number
            case "max-running-per-user":
                guard let number = Int(value), (0...10_000).contains(number) else {
                    return .failure(.init(
                        "invalid max-running-per-user '\(value.visible)': expected a whole number from 0 (no limit) to 10000"))
                }
                queue.maxRunningPerUser = number
            case "retry-base", "retry-cap":
                let span: Duration
                do throws(TimeSpan.Invalid) {
                    span = Duration(microseconds: try TimeSpan.parseMicroseconds(value))
                } catch {
                    return .failure(.init("invalid \(key) '\(value.visible)': \(error.message)"))
                }
                guard span > .zero else { return .failure(.init("\(key) must be longer than zero")) }
                if key == "retry-base" { queue.retryBase = span } else { queue.retryCap = span }
            default:
                return .failure(.init("unknown queue setting '\(key.visible)' (known: \(known))"))
            }
        }
        if let problem = QueuesInterface.retryProblem(baseUSec: queue.retryBase?.microseconds, capUSec: queue.retryCap?.microseconds) {
            return .failure(.init(problem))
        }
        if let problem = queue.executor.problem { return .failure(.init(problem)) }
        return .success(queue)
    }

    /// Why a `queue.NAME` line is refused.
    struct QueueLineProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }


}
