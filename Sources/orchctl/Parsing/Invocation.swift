import OrchestratorAPI

/// A parsed, validated command line for one command: what the command's `run` reads.
///
/// Values were checked against their ``ValueKind`` by the parser, so the typed accessors
/// below only convert.
struct Invocation: Hashable, Sendable {
    /// The command being run.
    var command: CommandSpec
    /// Global options (`--socket`, `--json`).
    var global: GlobalOptions
    /// Values of options that take one, by long name, in command-line order.
    var values: [String: [String]] = [:]
    /// Flags that were given, by long name.
    var flags: Set<String> = []
    /// Positional arguments, in order.
    var arguments: [String] = []
    /// Words after `--` for commands that take them verbatim; `nil` when there was no `--`.
    var trailing: [String]?

    /// The last value of option `name`, or `nil` when absent.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Whether flag `name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The last value of integer option `name`.
    func integer(_ name: String) -> Int? { value(name).flatMap { Int($0) } }

    /// `KEY=VALUE` values of repeatable option `name`, later ones winning.
    func keyValues(_ name: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in values[name] ?? [] {
            if let (key, value) = KeyValue.split(pair) { result[key] = value }
        }
        return result
    }

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
