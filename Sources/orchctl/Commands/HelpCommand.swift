import CommandLineParsing
/// `orchctl help [COMMAND]`: the same text as `orchctl COMMAND --help`. The parser answers it
/// (as ``ParseOutcome/help(_:)``), so `run` is never reached.
enum HelpCommand: OrchctlCommand {
    static let name = "help"
    static let spec = CommandSpec(
        name: name,
        abstract: "Show help for orchctl or one of its commands.",
        usage: "help [<subcommand> ...]",
        arguments: [ArgumentSpec(name: "subcommand", kind: .text, arity: .zeroOrMore, help: "The command to show help for, e.g. 'submit' or 'queue set'.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        .success
    }
}
