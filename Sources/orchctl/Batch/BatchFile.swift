import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI
#if canImport(Glibc)
import Glibc
#endif

/// The input of `orchctl submit --batch`: one job per line.
///
/// ```
/// # comments and blank lines are skipped
/// make -C lib test                                  a shell command line
/// {"argv": ["convert", "a b.png"], "priority": 5}  a JSON job spec
/// ```
///
/// Every job starts from the defaults the other submit options give; a JSON line's fields
/// replace them (a missing `cwd` or `environment`, or an empty `environment`, stays the caller's).
enum BatchFile {
    /// The JSON fields a line may carry: those of a ``JobSpec``.
    static let fields: Set<String> = [
        "argv", "shell", "cwd", "environment", "queue", "priority", "name", "labels",
        "after", "notBefore", "timeoutUSec", "maxAttempts", "uniqueKey",
    ]

    /// Turns the file's text into job specs, in line order.
    /// - Parameters:
    ///   - text: the whole file.
    ///   - defaults: the spec the options describe; its command is replaced on every line.
    /// - Throws: ``BatchFileError`` listing every bad line; then no spec is returned.
    static func parse(_ text: String, defaults: JobSpec) throws(BatchFileError) -> [JobSpec] {
        try parseNumbered(text, defaults: defaults).map(\.spec)
    }

    /// As ``parse(_:defaults:)``, with each spec's line number (from 1), so an error orchd
    /// reports about a spec can name its line.
    static func parseNumbered(_ text: String, defaults: JobSpec) throws(BatchFileError) -> [(line: Int, spec: JobSpec)] {
        var specs: [(line: Int, spec: JobSpec)] = []
        var problems: [BatchFileError.Problem] = []
        var defaultsObject: [String: JSONValue]?
        let decoder = JSONDecoder()
        let encoder = JSONEncoder()
        // A plain line is the defaults with a command of its own: all but the command is
        // checked once here (each line's check of the environment was most of parsing it).
        var defaultsProblem: JobSpecError?
        do { try defaults.validate() } catch { defaultsProblem = error }
        // Each line's own working directory, checked once: "" when it is a directory, else why not.
        var checkedDirectories: [String: String] = [:]

        // A byte order mark, which some editors write at the start of a UTF-8 file, is not
        // part of the first line: it would hide a JSON line's '{' and run it as a command.
        let text = text.hasPrefix("\u{FEFF}") ? Substring(text.dropFirst()) : Substring(text)
        // "\r\n" is one Character in Swift, so CRLF files need it named as a separator.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = rawLine.trimmingCharacters(while: \.isWhitespace)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let number = index + 1
            do throws(BatchFileError.Problem) {
                var spec: JobSpec
                let isJSON = line.hasPrefix("{")
                if isJSON {
                    if defaultsObject == nil { defaultsObject = try object(of: defaults, encoder: encoder, decoder: decoder, line: number) }
                    spec = try jsonSpec(String(line), defaults: defaultsObject ?? [:], encoder: encoder, decoder: decoder, line: number)
                } else {
                    spec = defaults
                    spec.command = .shell(String(line))
                }
                do throws(JobSpecError) {
                    if isJSON {
                        try spec.validate()
                    } else {
                        try spec.validateCommand()
                        if let defaultsProblem { throw defaultsProblem }
                    }
                } catch {
                    throw BatchFileError.Problem(line: number, message: error.message)
                }
                // A line's own directory is checked as --cwd is (the defaults' was): one that is
                // not there would be accepted by orchd and end the job spawn_failed.
                if isJSON, spec.cwd != defaults.cwd {
                    if checkedDirectories[spec.cwd] == nil { checkedDirectories[spec.cwd] = directoryProblem(spec.cwd) ?? "" }
                    if let problem = checkedDirectories[spec.cwd], !problem.isEmpty {
                        throw BatchFileError.Problem(line: number, message: "field 'cwd': \(problem)")
                    }
                }
                if let bytes = BatchSplitter.oversizedBytes(spec) {
                    throw BatchFileError.Problem(line: number, message: BatchSplitter.oversizedMessage(bytes))
                }
                specs.append((number, spec))
            } catch {
                problems.append(error)
            }
        }
        guard problems.isEmpty else { throw BatchFileError(problems: problems) }
        return specs
    }

    /// Why `path` cannot be a job's working directory (`/x: No such file or directory`, `/etc/passwd
    /// is not a directory`), or `nil` when it is a directory.
    static func directoryProblem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return "\(path): \(String(cString: strerror(errno)))" }
        return info.st_mode & S_IFMT == S_IFDIR ? nil : "\(path) is not a directory"
    }

    /// A JSON line: its fields over the defaults', decoded as a ``JobSpec``.
    private static func jsonSpec(
        _ line: String, defaults: [String: JSONValue], encoder: JSONEncoder, decoder: JSONDecoder, line number: Int
    ) throws(BatchFileError.Problem) -> JobSpec {
        // First: JSONDecoder keeps one of a name given twice and drops the other value, takes
        // some JSON that is not strict (a trailing comma) without a word, and hashes every name.
        let bytes = Data(line.utf8)
        var unusualNumbers: [JSONByteReader.UnusualNumber] = []
        switch JSONByteReader.strictScan(of: bytes, unusualNumbers: &unusualNumbers) {
        case .clean: break
        case .repeatedName(let path):
            throw .init(line: number, message: "'\(path.joined(separator: "."))' is given twice (or as two names Unicode holds equal)")
        case .notStrict:
            throw .init(line: number, message: "not valid JSON (a line cut short, or a stray character?)")
        case .unsafeName:
            throw .init(line: number, message: "a name has more than \(JSONByteReader.maximumNonStarters) combining marks in a row")
        }
        // Checked before decoding, by the number's text: JSONDecoder names no field for an
        // integer out of range, reads `1e3` or `12345678901234567.5` through a `Double`, and
        // cannot read a number past a `Double`'s range at all.
        for unusual in unusualNumbers where unusual.path.count <= 2 {
            guard let field = unusual.path.first, integerFields.contains(field) else { continue }
            let text = String(decoding: bytes[unusual.range], as: UTF8.self)
            if !unusual.isIntegerForm || Int64(text) == nil {
                throw .init(line: number, message: "field '\(field)' must be a whole number from \(Int64.min) to \(Int64.max), written in digits, not \(shortened(text))")
            }
        }
        let given: [String: JSONValue]
        do {
            given = try decoder.decode([String: JSONValue].self, from: bytes)
        } catch {
            // Strict JSON that JSONDecoder cannot read has a number past a Double's range.
            for unusual in unusualNumbers {
                let text = String(decoding: bytes[unusual.range], as: UTF8.self)
                guard Double(text)?.isFinite != true else { continue }
                throw .init(line: number, message: "'\(unusual.path.joined(separator: "."))' is a number too large to read: \(shortened(text))")
            }
            // A line starting with `{` that is JSON is an object: what fails is the JSON itself.
            throw .init(line: number, message: "not valid JSON (a line cut short, or a stray character?)")
        }
        if let unknown = given.keys.sorted().first(where: { !fields.contains($0) }) {
            throw .init(line: number, message: "unknown field '\(unknown)' (fields: \(fields.sorted().joined(separator: ", ")))")
        }
        if given["argv"] == nil && given["shell"] == nil {
            throw .init(line: number, message: "give the command as \"argv\" or \"shell\"")
        }
        var merged = defaults.merging(given) { _, new in new }
        // An empty environment is the caller's too, as README says: orchd cannot tell it from
        // none in a batch (SubmitBatch fills every empty one with the shared environment).
        if case .object(let environment)? = given["environment"], environment.isEmpty { merged["environment"] = defaults["environment"] }
        do {
            return try decoder.decode(JobSpec.self, from: try encoder.encode(merged))
        } catch let error as DecodingError {
            throw .init(line: number, message: describe(error))
        } catch {
            throw .init(line: number, message: "\(error)")
        }
    }

    /// A number's text as an error message quotes it: at most 40 characters.
    private static func shortened(_ text: String) -> String {
        text.count <= 40 ? text : text.prefix(37) + "..."
    }

    /// The fields whose values are integers (`after` holds them): a JSON number there must be
    /// written as an integer (`-?(0|[1-9][0-9]*)`, as orchd's protocol takes it) that a 64-bit
    /// integer holds; `1e3`, `1.0` and `1.5` are refused, naming the field.
    static let integerFields: Set<String> = ["priority", "timeoutUSec", "maxAttempts", "after"]

    /// The defaults as a JSON object without a command, to put a line's fields over.
    private static func object(
        of defaults: JobSpec, encoder: JSONEncoder, decoder: JSONDecoder, line: Int
    ) throws(BatchFileError.Problem) -> [String: JSONValue] {
        do {
            var object = try decoder.decode([String: JSONValue].self, from: try encoder.encode(defaults))
            object["argv"] = nil
            object["shell"] = nil
            return object
        } catch {
            throw .init(line: line, message: "cannot apply the defaults: \(error)")
        }
    }

    /// A decoding error as a short sentence naming the field.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "field '\(path(context))' is not \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "field '\(path(context))' must be \(typeName(type)), not null"
        case .keyNotFound(let key, _):
            return "field '\(key.stringValue)' is missing"
        case .dataCorrupted(let context):
            let field = path(context)
            return (field.isEmpty ? "" : "field '\(field)': ") + context.debugDescription
        @unknown default:
            return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is [String].Type: "an array of strings"
        case is [String: String].Type: "an object of strings"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        case is Bool.Type: "true or false"
        default: "of the expected type (\(type))"
        }
    }

    // MARK: - Reading

    /// Reads the whole file, or standard input for `-`.
    /// - Throws: ``CommandLineError`` when it cannot be read or is not UTF-8.
    static func read(_ path: String) throws(CommandLineError) -> String {
        guard !path.isEmpty else {
            throw CommandLineError(.invalidValue, "invalid value for option '--batch': the path is empty (a file, or - for standard input)", command: "submit")
        }
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CommandLineError(.invalidValue, "invalid value for option '--batch': \(path): \(String(cString: strerror(errno)))", command: "submit")
        }
        defer { if fd != 0 { close(fd) } }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CommandLineError(.invalidValue, "invalid value for option '--batch': cannot read \(path): \(String(cString: strerror(errno)))", command: "submit")
            }
            if n == 0 { break }
            bytes += buffer[..<n]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandLineError(.invalidValue, "invalid value for option '--batch': \(path) is not UTF-8 text", command: "submit")
        }
        return text
    }
}

/// Bad lines of a batch file; nothing is submitted.
struct BatchFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One bad line.
    struct Problem: Error, Hashable, Sendable {
        /// The line number, from 1.
        var line: Int
        /// What is wrong with it.
        var message: String
    }

    /// Every bad line, in order.
    var problems: [Problem]

    /// The most lines the description lists.
    static let listed = 20

    /// `line 7: ...` per bad line (the first ``listed``), how many more there are, and that
    /// nothing was submitted.
    var description: String {
        var lines = problems.prefix(Self.listed).map { "line \($0.line): \($0.message)" }
        if problems.count > Self.listed { lines.append("... and \(problems.count - Self.listed) more bad lines") }
        // orchctl prints the first line after `Error: `; the others get the prefix here.
        return lines.joined(separator: "\nError: ") + "\nNothing was submitted."
    }
}

extension Substring {
    /// The substring without leading and trailing characters matching `predicate`.
    fileprivate func trimmingCharacters(while predicate: (Character) -> Bool) -> Substring {
        guard let first = firstIndex(where: { !predicate($0) }), let last = lastIndex(where: { !predicate($0) }) else { return "" }
        return self[first...last]
    }
}
