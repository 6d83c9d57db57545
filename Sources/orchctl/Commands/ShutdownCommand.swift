import CommandLineParsing
import OrchestratorAPI

/// `orchctl shutdown [--wait]`: asks orchd to stop, as SIGTERM does.
enum ShutdownCommand: OrchctlCommand {
    static let name = "shutdown"
    static let spec = CommandSpec(
        name: name,
        abstract: "Stop orchd, as SIGTERM does.",
        discussion: """
            Only root, orchd's own user and members of its admin group may call it. orchd stops as on SIGTERM: it takes no \
            new jobs, running jobs get the drain timeout to finish, then are torn down and \
            recorded interrupted, and orchd exits 0. Prints 'stopping' once orchd has accepted; with --wait, \
            returns once orchd has removed its socket and closed its connections. Under systemd, \
            'systemctl stop orchd' is the usual way (a service set to restart would come back).
            """,
        usage: "shutdown [--wait]",
        arguments: [],
        options: Options.specs)

    /// `shutdown`'s options.
    struct Options: CommandOptions {
        var wait = false

        static let bindings: [OptionBinding<Options>] = [
            .flag(\.wait, "wait", help: "Return once orchd has removed its socket and closed its connections."),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let reply = try connection.call(ManagerInterface.shutdown, VarlinkNoParameters())
        if Options(decoding: invocation).wait {
            try connection.waitForClose()
        }
        if invocation.global.json {
            context.console.write(try JSONOutput.text(reply))
        } else {
            context.console.print("stopping")
        }
        return .success
    }
}
