import OrchestratorAPI

/// `orchctl retry ID`: runs a finished job again.
enum RetryCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "retry",
        abstract: "Run a finished job again.",
        discussion: "The job keeps its ID and gets its next attempt (one more is allowed); 'orchctl show' lists the earlier attempts. Only a finished job can be retried. Prints the job's ID.",
        usage: "retry <id>",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The finished job to run again.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let job = try connection.call(
            "io.orchd.Jobs.Retry", JobsInterface.GetParameters(id: invocation.jobIDs[0]), returning: JobsInterface.JobReply.self).job
        if invocation.global.json {
            context.console.write(try JSONOutput.text(job))
        } else {
            context.console.print(job.id.description)
        }
        return .success
    }
}
