import CommandLineParsing
import OrchestratorAPI

/// `orchctl reload`: has orchd re-read its configuration file, as SIGHUP does.
enum ReloadCommand: OrchctlCommand {
    static let name = "reload"
    static let spec = CommandSpec(
        name: name,
        abstract: "Re-read orchd's configuration file.",
        discussion: """
            Does what 'systemctl reload orchd' (SIGHUP) does: the configuration file is read \
            again and its concurrency, kill-grace and log-level apply at once; flags given to orchd \
            still win. A file that cannot be read is reported and the current settings stay.
            """,
        usage: "reload",
        arguments: [],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let reply = try connection.call(
            ManagerInterface.reload, VarlinkNoParameters())
        if invocation.global.json {
            context.console.write(try JSONOutput.text(reply))
        } else if let error = reply.error {
            context.console.printError("Error: reload failed, the current settings stay: \(error)")
            return .failure
        } else {
            context.console.print("reloaded (default concurrency \(reply.concurrency); a queue the file names takes the file's settings, the others keep theirs)")
        }
        return reply.error == nil ? .success : .failure
    }
}
