import OrchestratorAPI

/// A parsed, validated command line for one command: what the command's `run` reads.
///
/// Option values were checked and converted by the parser, once; a command reads them as
/// its typed ``CommandOptions`` (`Options(decoding: invocation)`), never by name.
public struct Invocation: Hashable, Sendable {
    /// The command being run.
    public var command: CommandSpec
    /// Global options (`--socket`, `--json`).
    public var global: GlobalOptions
    /// Values of options that take one, by long name, in command-line order.
    public var values: [String: [ParsedValue]] = [:]
    /// Flags that were given, by long name.
    public var flags: Set<String> = []
    /// Positional arguments, in order.
    public var arguments: [String] = []
    /// Words after `--` for commands that take them verbatim; `nil` when there was no `--`.
    public var trailing: [String]?

    /// An invocation of `command` with no option or argument given yet.
    public init(command: CommandSpec, global: GlobalOptions) {
        self.command = command
        self.global = global
    }

    /// The positional arguments as job IDs (already validated by the parser), each once, in
    /// the order first given: `hold 5 5` holds job 5, and says so, once.
    public var jobIDs: [JobID] {
        var seen: Set<JobID> = []
        return arguments.compactMap { JobID(parsing: $0) }.filter { seen.insert($0).inserted }
    }
}

/// Splitting of `KEY=VALUE` words.
public enum KeyValue {
    /// Splits at the first `=`; `nil` when there is none or the key is empty.
    public static func split(_ word: String) -> (key: String, value: String)? {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return nil }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }
}
