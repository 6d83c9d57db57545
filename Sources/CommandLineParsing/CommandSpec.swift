/// A command of orchctl as data: the parser validates against it and ``HelpRenderer``
/// writes its help from it, so help cannot drift from what is accepted.
public struct CommandSpec: Hashable, Sendable {
    /// The words that select the command: `submit`, or `queue set` for a subcommand (the
    /// group's name, a space, the subcommand's word).
    public var name: String
    /// One imperative sentence ending with a period (`Queue a command as a job.`).
    public var abstract: String
    /// Optional paragraphs shown after the overview.
    public var discussion: String?
    /// The usage line after `orchctl ` (e.g. `submit [<options>] -- <argv> ...`).
    public var usage: String
    /// Positional arguments, in order.
    public var arguments: [ArgumentSpec]
    /// The command's own options (global options are added by the parser and renderer).
    public var options: [OptionSpec]
    /// Whether words after `--` are kept verbatim as ``Invocation/trailing`` (the job's
    /// argv) instead of being parsed as positional arguments.
    public var takesTrailingArguments: Bool = false
    /// For a command group such as `queue`: its subcommands, whose names start with this
    /// name and a space. A group runs only through one of them.
    public var subcommands: [CommandSpec] = []
    /// For a command whose output has no JSON form (a live view, a job's own output, a
    /// script): why, said when `--json` is given, which is then refused and not listed in its
    /// help. `nil` for a command that prints JSON with `--json`.
    public var withoutJSON: String?

    /// Declares a command.
    public init(
        name: String, abstract: String, discussion: String? = nil, usage: String, arguments: [ArgumentSpec],
        options: [OptionSpec], takesTrailingArguments: Bool = false, subcommands: [CommandSpec] = [], withoutJSON: String? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.usage = usage
        self.arguments = arguments
        self.options = options
        self.takesTrailingArguments = takesTrailingArguments
        self.subcommands = subcommands
        self.withoutJSON = withoutJSON
    }

    /// Whether the command takes the global option `option`: every one but `--json` where
    /// its output has no JSON form (``withoutJSON``), for its help and shell completion.
    public func accepts(global option: OptionSpec) -> Bool {
        withoutJSON == nil || option.name != "json"
    }

    /// Whether this is a group of subcommands.
    public var isGroup: Bool { !subcommands.isEmpty }

    /// The last word of the name (`set` for `queue set`).
    public var word: String { name.split(separator: " ").last.map(String.init) ?? name }

    /// This command and all its subcommands, depth first.
    public var flattened: [CommandSpec] { [self] + subcommands.flatMap(\.flattened) }

    /// The option with long name `name`, if the command declares it.
    public func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }
}
