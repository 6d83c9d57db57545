import CommandLineParsing
import OrchestratorAPI

/// `orchctl manual`: prints orchctl(1), written from the command table (``ManPage``).
enum ManualCommand: OrchctlCommand {
    static let name = "manual"
    static let spec = CommandSpec(
        name: name,
        abstract: "Print orchctl's manual page (roff) for man(1).",
        discussion: "Read it with 'orchctl manual | man -l -'. scripts/install.sh installs it as orchctl(1), with orchd(8).",
        usage: "manual",
        arguments: [],
        options: [],
        withoutJSON: "manual prints a roff manual page")

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        context.console.write(ManPage(commands: CommandTable.specs, version: OrchdVersion.string).render())
        return .success
    }
}
