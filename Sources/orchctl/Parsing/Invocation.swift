import OrchestratorAPI

/// A parsed, validated command line for one command: what the command's `run` reads.
///
/// Option values were checked and converted by the parser, once; a command reads them as
/// its typed ``CommandOptions`` (`Options(decoding: invocation)`), never by name.
struct Invocation: Hashable, Sendable {
    /// The command being run.
    var command: CommandSpec
    /// Global options (`--socket`, `--json`).
    var global: GlobalOptions
    /// Values of options that take one, by long name, in command-line order.
    var values: [String: [ParsedValue]] = [:]
    /// Flags that were given, by long name.
    var flags: Set<String> = []
    /// Positional arguments, in order.
    var arguments: [String] = []
    /// Words after `--` for commands that take them verbatim; `nil` when there was no `--`.
    var trailing: [String]?

    /// The positional arguments as job IDs (already validated by the parser).
    var jobIDs: [JobID] { arguments.compactMap { JobID(parsing: $0) } }
}

/// Splitting of `KEY=VALUE` words.
enum KeyValue {
    /// Splits at the first `=`; `nil` when there is none or the key is empty.
    static func split(_ word: String) -> (key: String, value: String)? {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return nil }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }
}
