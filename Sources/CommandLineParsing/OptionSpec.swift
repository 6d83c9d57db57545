/// One option of a command, declared as data so the parser and the help renderer agree.
public struct OptionSpec: Hashable, Sendable {
    /// The long name without dashes (`queue` for `--queue`).
    public var name: String
    /// A one-letter alias without the dash (`h` for `-h`), if any.
    public var short: Character?
    /// The value's placeholder in help (`queue` renders `<queue>`); `nil` for a flag.
    public var valueName: String?
    /// What the value must look like.
    public var kind: ValueKind
    /// One sentence for help, ending with a period.
    public var help: String
    /// The value used when the option is absent, shown as `(default: …)`.
    public var defaultValue: String?
    /// Whether the option may be given more than once (values accumulate).
    public var isRepeatable: Bool
    /// Whether help leaves the option out (orchd's test-only flag); it is accepted all the same.
    public var isHidden = false
    /// Whether the value may itself look like an option (`--slurm-option --mem=2G`, an option
    /// passed on to another program): the next word is the value unless it is an option of
    /// this command (or a global one, `--help`, `-h`).
    public var takesOptionLikeValue = false

    /// Declares an option that takes a value.
    public static func value(
        _ name: String, _ valueName: String, kind: ValueKind = .text, help: String,
        default defaultValue: String? = nil, repeatable: Bool = false
    ) -> OptionSpec {
        OptionSpec(name: name, short: nil, valueName: valueName, kind: kind, help: help,
                   defaultValue: defaultValue, isRepeatable: repeatable)
    }

    /// Declares a flag (an option without a value).
    public static func flag(_ name: String, short: Character? = nil, help: String, hidden: Bool = false) -> OptionSpec {
        OptionSpec(name: name, short: short, valueName: nil, kind: .text, help: help,
                   defaultValue: nil, isRepeatable: false, isHidden: hidden)
    }

    /// Whether the option takes a value.
    public var takesValue: Bool { valueName != nil }

    /// `-h, --help` or `--queue <queue>`, as help and usage show it.
    public var label: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--" + name
        if let valueName { text += " <\(valueName)>" }
        return text
    }
}
