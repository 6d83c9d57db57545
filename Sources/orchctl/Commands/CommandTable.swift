import CommandLineParsing
/// Every command orchctl knows, in the order help lists them.
enum CommandTable {
    /// The commands' implementations, subcommands (`queue set`) included.
    static let commands: [any OrchctlCommand.Type] = [
        SubmitCommand.self,
        StatusCommand.self,
        ShowCommand.self,
        LogsCommand.self,
        WaitCommand.self,
        CancelCommand.self,
        RetryCommand.self,
        HoldCommand.self,
        ReleaseCommand.self,
        EditCommand.self,
        SuspendCommand.self,
        ContinueCommand.self,
        QueuesCommand.self,
        QueueCommand.self,
        QueueAddCommand.self,
        QueueSetCommand.self,
        QueueRemoveCommand.self,
        PauseCommand.self,
        ResumeCommand.self,
        EventsCommand.self,
        TopCommand.self,
        PruneCommand.self,
        InfoCommand.self,
        PingCommand.self,
        ReloadCommand.self,
        ShutdownCommand.self,
        CompletionCommand.self,
        ManualCommand.self,
        HelpCommand.self,
    ]

    /// The top-level declarations (a group carries its subcommands), for the parser and the
    /// top-level help.
    static var specs: [CommandSpec] { commands.map { $0.spec }.filter { !$0.name.contains(" ") } }

    /// Every declaration, subcommands included.
    static var allSpecs: [CommandSpec] { specs.flatMap(\.flattened) }

    /// The implementation of the command named `name` (`queue set` for a subcommand).
    static func command(named name: String) -> (any OrchctlCommand.Type)? {
        commands.first { $0.name == name }
    }

    /// The declaration of the top-level command named `word`, built alone: declaring every
    /// command's options was a sixth of a `submit`'s start-up.
    @Sendable static func topLevelSpec(named word: String) -> CommandSpec? {
        guard !word.contains(" ") else { return nil }
        return command(named: word)?.spec
    }
}
