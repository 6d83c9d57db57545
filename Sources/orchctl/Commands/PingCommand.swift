import CommandLineParsing
import OrchestratorAPI

/// `orchctl ping`: checks that orchd answers.
enum PingCommand: OrchctlCommand {
    static let name = "ping"
    static let spec = CommandSpec(
        name: name,
        abstract: "Check that orchd is running and answering.",
        discussion: "Prints 'pong' and exits 0 when orchd answers; exits 69 when it cannot be reached.",
        usage: "ping",
        arguments: [],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let reply = try connection.call(ManagerInterface.ping, VarlinkNoParameters())
        if invocation.global.json {
            context.console.write(try JSONOutput.text(reply))
        } else {
            context.console.print("pong")
        }
        return .success
    }
}
