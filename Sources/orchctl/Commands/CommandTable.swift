/// Every command orchctl knows, in the order help lists them.
enum CommandTable {
    /// The commands' implementations.
    static let commands: [any OrchctlCommand.Type] = [
        SubmitCommand.self,
        StatusCommand.self,
        ShowCommand.self,
        LogsCommand.self,
        WaitCommand.self,
        CancelCommand.self,
        InfoCommand.self,
        PingCommand.self,
        HelpCommand.self,
    ]

    /// Their declarations.
    static var specs: [CommandSpec] { commands.map { $0.spec } }

    /// The implementation of the command named `name`.
    static func command(named name: String) -> (any OrchctlCommand.Type)? {
        commands.first { $0.spec.name == name }
    }
}
