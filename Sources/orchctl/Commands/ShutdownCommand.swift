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
            returns once orchd has exited (saying on standard error, when that takes over a second, that running jobs are draining), so another orchd can start on its state directory at once (on a \
            socket systemd made, once orchd has closed its connections). Under systemd, \
            'systemctl stop orchd' is the usual way (a service set to restart would come back).
            """,
        usage: "shutdown [--wait]",
        arguments: [],
        options: Options.specs)

    /// `shutdown`'s options.
    struct Options: CommandOptions {
        var wait = false

        static let bindings: [OptionBinding<Options>] = [
            .flag(\.wait, "wait", help: "Return once orchd has exited (on a socket systemd made: once it has closed its connections)."),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let wait = Options(decoding: invocation).wait
        // Held before the stop can begin, while orchd is surely alive.
        let process = wait
            ? DaemonProcessWatch(connection: connection, reportedPID: try connection.call(ManagerInterface.getInfo, VarlinkNoParameters()).pid)
            : nil
        let reply = try connection.call(ManagerInterface.shutdown, VarlinkNoParameters())
        // Said as soon as orchd has accepted, before any wait: a drain may take long.
        if invocation.global.json {
            context.console.write(try JSONOutput.text(reply))
        } else {
            context.console.print("stopping")
        }
        if wait {
            try DelayedNote.during(
                "orchctl: waiting for orchd to exit: its running jobs get the drain timeout to finish, then are torn down",
                on: context.console, after: .seconds(1)
            ) { () throws(CommandFailure) in
                try connection.waitForClose()
                process?.waitForExit()
            }
        }
        return .success
    }
}
