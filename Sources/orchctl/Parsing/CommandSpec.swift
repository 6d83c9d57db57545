/// A command of orchctl as data: the parser validates against it and ``HelpRenderer``
/// writes its help from it, so help cannot drift from what is accepted.
struct CommandSpec: Hashable, Sendable {
    /// The words that select the command: `submit`, or `queue set` for a subcommand (the
    /// group's name, a space, the subcommand's word).
    var name: String
    /// One imperative sentence ending with a period (`Queue a command as a job.`).
    var abstract: String
    /// Optional paragraphs shown after the overview.
    var discussion: String?
    /// The usage line after `orchctl ` (e.g. `submit [<options>] -- <argv> ...`).
    var usage: String
    /// Positional arguments, in order.
    var arguments: [ArgumentSpec]
    /// The command's own options (global options are added by the parser and renderer).
    var options: [OptionSpec]
    /// Whether words after `--` are kept verbatim as ``Invocation/trailing`` (the job's
    /// argv) instead of being parsed as positional arguments.
    var takesTrailingArguments: Bool = false
    /// For a command group such as `queue`: its subcommands, whose names start with this
    /// name and a space. A group runs only through one of them.
    var subcommands: [CommandSpec] = []

    /// Whether this is a group of subcommands.
    var isGroup: Bool { !subcommands.isEmpty }

    /// The last word of the name (`set` for `queue set`).
    var word: String { name.split(separator: " ").last.map(String.init) ?? name }

    /// This command and all its subcommands, depth first.
    var flattened: [CommandSpec] { [self] + subcommands.flatMap(\.flattened) }

    /// The option with long name `name`, if the command declares it.
    func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }
}
