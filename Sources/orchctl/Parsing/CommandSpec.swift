/// A command of orchctl as data: the parser validates against it and ``HelpRenderer``
/// writes its help from it, so help cannot drift from what is accepted.
struct CommandSpec: Hashable, Sendable {
    /// The word that selects the command (`submit`).
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

    /// The option with long name `name`, if the command declares it.
    func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }
}
