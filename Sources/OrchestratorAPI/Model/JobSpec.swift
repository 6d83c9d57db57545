import FoundationEssentials
import Glibc

/// What a submitter asks for: the command and how, where and when to run it.
///
/// On the wire (`io.orchd.Jobs.Submit`) the command is either `argv` (a non-empty array) or
/// `shell` (a string), never both. ``validate()`` checks what the type cannot.
public struct JobSpec: Hashable, Sendable, Codable {
    /// The command to run.
    public var command: JobCommand
    /// The absolute working directory the job starts in (the submitter's by default).
    public var cwd: String
    /// The job's environment: the submitter's, minus the variables of the daemon's supervisor
    /// (see ``JobSpec/supervisorVariables``).
    public var environment: [String: String]
    /// The queue the job runs in.
    public var queue: QueueName
    /// Higher runs first; FIFO among equal priorities.
    public var priority: Int
    /// An optional human-readable name.
    public var name: String?
    /// Free-form `key=value` labels.
    public var labels: [String: String]
    /// Jobs that must succeed before this one starts; if one does not, this job finishes as
    /// `dependencyFailed` without starting.
    public var after: [JobID]
    /// The earliest start (`--delay`, `--at`); `nil` for as soon as possible.
    public var notBefore: Date?
    /// The longest a run may take, in microseconds, counted from its start; then the job's
    /// process group is torn down and the result is `timedOut`.
    public var timeoutUSec: Int64?
    /// Attempts allowed in all: 1 runs once, N + 1 retries a failed run N times.
    public var maxAttempts: Int
    /// While a job with this key is not finished, another with the same key is refused.
    public var uniqueKey: String?

    /// Creates a spec.
    /// - Parameters:
    ///   - command: what to run.
    ///   - cwd: absolute working directory.
    ///   - environment: the job's complete environment; supervisor variables are removed.
    ///   - queue: the queue (default `default`).
    ///   - priority: higher first (default 0).
    ///   - name: optional display name.
    ///   - labels: optional labels.
    ///   - after: jobs that must succeed first.
    ///   - notBefore: the earliest start.
    ///   - timeoutUSec: run time limit, in microseconds.
    ///   - maxAttempts: attempts allowed in all (1 = no retry).
    ///   - uniqueKey: refuse a second live job with this key.
    public init(
        command: JobCommand,
        cwd: String,
        environment: [String: String],
        queue: QueueName = .default,
        priority: Int = 0,
        name: String? = nil,
        labels: [String: String] = [:],
        after: [JobID] = [],
        notBefore: Date? = nil,
        timeoutUSec: Int64? = nil,
        maxAttempts: Int = 1,
        uniqueKey: String? = nil
    ) {
        self.command = command
        self.cwd = cwd
        self.environment = Self.removingSupervisorVariables(environment)
        self.queue = queue
        self.priority = priority
        self.name = name
        self.labels = labels
        self.after = after
        self.notBefore = notBefore
        self.timeoutUSec = timeoutUSec
        self.maxAttempts = maxAttempts
        self.uniqueKey = uniqueKey
    }

    /// Variables that belong to the daemon's supervisor (systemd) and must never reach a job:
    /// sd_notify(3), sd_watchdog_enabled(3), sd_listen_fds(3), systemd.exec(5).
    public static let supervisorVariables: Set<String> = [
        "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
        "INVOCATION_ID", "JOURNAL_STREAM",
    ]

    /// The longest timeout accepted: 100 years, in microseconds.
    public static let maximumTimeoutUSec: Int64 = 100 * 31_557_600 * 1_000_000
    /// Start times must come before the year 10000 (RFC 3339 has four-digit years), in
    /// seconds since the Unix epoch.
    public static let latestStartSeconds: Double = 253_402_300_800

    /// Whether two environments hold the same names and values byte for byte. Not `==`:
    /// `String` compares by canonical equivalence, so "é" as one code point equals "e" with a
    /// combining accent, and a job must get the bytes it was submitted with.
    public static func environmentsHaveSameBytes(_ a: [String: String], _ b: [String: String]) -> Bool {
        if isSameDictionary(a, b) { return true }
        guard a.count == b.count else { return false }
        for (name, value) in a {
            guard let index = b.index(forKey: name) else { return false }
            let (otherName, otherValue) = b[index]
            guard sameBytes(name, otherName), sameBytes(value, otherValue) else { return false }
        }
        return true
    }

    /// Whether `a` and `b` are one dictionary, not only equal ones: a batch's specs share
    /// their environment's storage. A value's representation names its storage, so equal
    /// representations are one dictionary, and no entry needs reading.
    public static func isSameDictionary(_ a: [String: String], _ b: [String: String]) -> Bool {
        withUnsafeBytes(of: a) { x in withUnsafeBytes(of: b) { y in x.elementsEqual(y) } }
    }

    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                // memcmp, not elementsEqual: the generic loop was a quarter of a batch's cost.
                x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }

    /// Returns `environment` without ``supervisorVariables``.
    public static func removingSupervisorVariables(_ environment: [String: String]) -> [String: String] {
        environment.filter { !supervisorVariables.contains($0.key) }
    }

    /// Checks the rules the type cannot express.
    /// - Throws: ``JobSpecError`` naming the first rule broken: an empty argv, an empty shell
    ///   string, a relative cwd, a NUL byte in any string, an environment name or label key
    ///   that is empty or has `=`, a
    ///   timeout outside 1 µs...100 years, a start time past the year 9999, attempts outside
    ///   1...1000, or an empty unique key or one that is not stream-safe text (more than 30
    ///   combining marks in a row, ``JSONByteReader/isStreamSafe(_:)``).
    public func validate() throws(JobSpecError) {
        try validate(environmentAlreadyValid: false)
    }

    /// ``validate()``, skipping the environment when the caller has validated this very
    /// dictionary before (the specs of a batch share one: checking its variables for each job
    /// was a fifth of orchd's work for a batch from `orchctl submit --batch`).
    /// - Parameter environmentAlreadyValid: the environment passed ``validate()`` already.
    public func validate(environmentAlreadyValid: Bool) throws(JobSpecError) {
        if let timeoutUSec, timeoutUSec <= 0 || timeoutUSec > Self.maximumTimeoutUSec { throw .invalidTimeout }
        if let notBefore, notBefore.timeIntervalSince1970 >= Self.latestStartSeconds { throw .startTooLate }
        guard (1...1000).contains(maxAttempts) else { throw .invalidAttempts(maxAttempts) }
        if let uniqueKey, uniqueKey.isEmpty { throw .emptyUniqueKey }
        if let uniqueKey, !JSONByteReader.isStreamSafe(uniqueKey) { throw .uniqueKeyNotStreamSafe }
        if after.contains(where: { $0.rawValue <= 0 }) { throw .invalidDependency }
        try validateCommand()
        guard cwd.hasPrefix("/") else { throw .relativeWorkingDirectory(cwd) }
        if Self.containsNUL(cwd) { throw .nulByte(field: "cwd") }
        if let name, Self.containsNUL(name) { throw .nulByte(field: "name") }
        if let uniqueKey, Self.containsNUL(uniqueKey) { throw .nulByte(field: "uniqueKey") }
        for (key, value) in labels {
            if key.isEmpty || key.utf8.contains(UInt8(ascii: "=")) { throw .invalidLabelKey(key) }
            if Self.containsNUL(key) || Self.containsNUL(value) { throw .nulByte(field: "labels") }
        }
        if environmentAlreadyValid { return }
        for (key, value) in environment {
            // Bytes, not `contains("=")`: the substring search was most of validating a spec.
            if key.isEmpty || key.utf8.contains(UInt8(ascii: "=")) { throw .invalidEnvironmentName(key) }
            if Self.containsNUL(key) || Self.containsNUL(value) { throw .nulByte(field: "environment") }
        }
    }

    /// Checks the command alone, as ``validate()`` does: for specs that differ from a
    /// validated one only by their command (the plain lines of a batch file).
    /// - Throws: ``JobSpecError/emptyCommand`` or ``JobSpecError/nulByte(field:)``.
    public func validateCommand() throws(JobSpecError) {
        switch command {
        case .argv(let argv):
            guard let first = argv.first, !first.isEmpty else { throw .emptyCommand }
            if argv.contains(where: Self.containsNUL) { throw .nulByte(field: "argv") }
        case .shell(let string):
            guard !string.isEmpty else { throw .emptyCommand }
            if Self.containsNUL(string) { throw .nulByte(field: "shell") }
        }
    }

    /// Whether `text` has a NUL byte, looked for in its contiguous bytes: the generic
    /// `utf8.contains` over every variable was a twentieth of orchd's work for a submit.
    private static func containsNUL(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? text.utf8.contains(0)
    }

    // MARK: - Codable

    private enum CodingKeys: String, CodingKey {
        case argv, shell, cwd, environment, queue, priority, name, labels
        case after, notBefore, timeoutUSec, maxAttempts, uniqueKey
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let argv = try container.decodeIfPresent([String].self, forKey: .argv)
        let shell = try container.decodeIfPresent(String.self, forKey: .shell)
        switch (argv, shell) {
        case (let argv?, nil): command = .argv(argv)
        case (nil, let shell?): command = .shell(shell)
        default:
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath, debugDescription: "exactly one of argv and shell must be given"))
        }
        cwd = try container.decode(String.self, forKey: .cwd)
        environment = Self.removingSupervisorVariables(
            try container.decodeIfPresent([String: String].self, forKey: .environment) ?? [:])
        queue = try container.decodeIfPresent(QueueName.self, forKey: .queue) ?? .default
        priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 0
        name = try container.decodeIfPresent(String.self, forKey: .name)
        labels = try container.decodeIfPresent([String: String].self, forKey: .labels) ?? [:]
        after = try container.decodeIfPresent([JobID].self, forKey: .after) ?? []
        if let text = try container.decodeIfPresent(String.self, forKey: .notBefore) {
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .notBefore, in: container, debugDescription: "not an RFC 3339 time: \(text)")
            }
            notBefore = date
        } else {
            notBefore = nil
        }
        timeoutUSec = try container.decodeIfPresent(Int64.self, forKey: .timeoutUSec)
        maxAttempts = try container.decodeIfPresent(Int.self, forKey: .maxAttempts) ?? 1
        uniqueKey = try container.decodeIfPresent(String.self, forKey: .uniqueKey)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch command {
        case .argv(let argv): try container.encode(argv, forKey: .argv)
        case .shell(let shell): try container.encode(shell, forKey: .shell)
        }
        try container.encode(cwd, forKey: .cwd)
        try container.encode(environment, forKey: .environment)
        try container.encode(queue, forKey: .queue)
        try container.encode(priority, forKey: .priority)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encode(labels, forKey: .labels)
        if !after.isEmpty { try container.encode(after, forKey: .after) }
        try container.encodeIfPresent(notBefore.map(Timestamp.format), forKey: .notBefore)
        try container.encodeIfPresent(timeoutUSec, forKey: .timeoutUSec)
        if maxAttempts != 1 { try container.encode(maxAttempts, forKey: .maxAttempts) }
        try container.encodeIfPresent(uniqueKey, forKey: .uniqueKey)
    }
}

extension JobSpec: JSONByteEncodable {
    /// Writes what ``encode(to:)`` encodes, member for member.
    public func writeJSON(to writer: inout JSONByteWriter) {
        switch command {
        case .argv(let argv): writer.raw(#"{"argv":"#); writer.array(argv)
        case .shell(let shell): writer.raw(#"{"shell":"#); writer.string(shell)
        }
        writer.raw(#","cwd":"#); writer.string(cwd)
        writer.raw(#","environment":"#); writer.object(environment)
        writer.raw(#","queue":"#); writer.string(queue.rawValue)
        writer.raw(#","priority":"#); writer.integer(priority)
        if let name { writer.raw(#","name":"#); writer.string(name) }
        writer.raw(#","labels":"#); writer.object(labels)
        if !after.isEmpty {
            writer.raw(#","after":"#)
            writer.array(after)
        }
        if let notBefore { writer.raw(#","notBefore":"#); writer.timestamp(notBefore) }
        if let timeoutUSec { writer.raw(#","timeoutUSec":"#); writer.integer(timeoutUSec) }
        if maxAttempts != 1 { writer.raw(#","maxAttempts":"#); writer.integer(maxAttempts) }
        if let uniqueKey { writer.raw(#","uniqueKey":"#); writer.string(uniqueKey) }
        writer.raw("}")
    }
}
