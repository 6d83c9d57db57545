import FoundationEssentials
import OrchestratorAPI

/// `orchctl logs ID [--stderr]`: a job's captured output, byte-exact.
enum LogsCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "logs",
        abstract: "Print the output a job has written so far.",
        discussion: "The bytes are written unchanged, so binary output survives a pipe.",
        usage: "logs <id> [--stderr]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The job's ID.")],
        options: [.flag("stderr", help: "Print the job's standard error instead of its standard output.")])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let parameters = JobsInterface.LogsParameters(
            id: invocation.jobIDs[0], stream: invocation.flag("stderr") ? .stderr : .stdout)
        try connection.stream("io.orchd.Jobs.Logs", parameters, returning: JobsInterface.LogsReply.self) { (reply) throws(CommandFailure) in
            guard let data = Data(base64Encoded: reply.data) else {
                throw CommandFailure("orchd sent log data that is not base64")
            }
            if !data.isEmpty { context.console.writeOutput(Array(data)) }
        }
        return .success
    }
}
