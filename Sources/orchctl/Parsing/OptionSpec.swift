/// One option of a command, declared as data so the parser and the help renderer agree.
struct OptionSpec: Hashable, Sendable {
    /// The long name without dashes (`queue` for `--queue`).
    var name: String
    /// A one-letter alias without the dash (`h` for `-h`), if any.
    var short: Character?
    /// The value's placeholder in help (`queue` renders `<queue>`); `nil` for a flag.
    var valueName: String?
    /// What the value must look like.
    var kind: ValueKind
    /// One sentence for help, ending with a period.
    var help: String
    /// The value used when the option is absent, shown as `(default: …)`.
    var defaultValue: String?
    /// Whether the option may be given more than once (values accumulate).
    var isRepeatable: Bool

    /// Declares an option that takes a value.
    static func value(
        _ name: String, _ valueName: String, kind: ValueKind = .text, help: String,
        default defaultValue: String? = nil, repeatable: Bool = false
    ) -> OptionSpec {
        OptionSpec(name: name, short: nil, valueName: valueName, kind: kind, help: help,
                   defaultValue: defaultValue, isRepeatable: repeatable)
    }

    /// Declares a flag (an option without a value).
    static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, valueName: nil, kind: .text, help: help,
                   defaultValue: nil, isRepeatable: false)
    }

    /// Whether the option takes a value.
    var takesValue: Bool { valueName != nil }

    /// `-h, --help` or `--queue <queue>`, as help and usage show it.
    var label: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--" + name
        if let valueName { text += " <\(valueName)>" }
        return text
    }
}
