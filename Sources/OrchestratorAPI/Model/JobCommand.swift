/// What a job runs: an exact argument vector, or a string for `/bin/sh -c`.
public enum JobCommand: Hashable, Sendable {
    /// Executed as given, without a shell; `argv[0]` is looked up in the job's `PATH` unless
    /// it contains a `/`.
    case argv([String])
    /// Run as `/bin/sh -c STRING`.
    case shell(String)

    /// The argument vector the process is started with.
    public var processArguments: [String] {
        switch self {
        case .argv(let argv): argv
        case .shell(let string): ["/bin/sh", "-c", string]
        }
    }

    /// A one-line rendering for tables: the shell string, or the argv joined with spaces and
    /// quoted where a word would otherwise be ambiguous.
    public var displayText: String {
        switch self {
        case .shell(let string): string
        case .argv(let argv): argv.map(Self.quoted).joined(separator: " ")
        }
    }

    private static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./=:,+%@".unicodeScalars.contains(scalar)
        }
        if plain { return word }
        return "'" + word.replacing("'", with: "'\\''") + "'"
    }
}
