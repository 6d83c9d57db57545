import CommandLineParsing
import OrchestratorAPI

/// `orchctl retry ID`: runs a finished job again.
enum RetryCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "retry",
        abstract: "Run a finished job again.",
        discussion: """
            The job keeps its ID and gets its next attempt (one more is allowed); 'orchctl show' lists the earlier attempts. Only a finished job can be retried, whatever its result. Prints the job's ID.

            The rules of a new job apply again. The job is queued when every job it runs --after has succeeded and its start time (--delay, --at) has come; it waits while a dependency has not finished or its start time is ahead, and runs once they allow. A paused queue stays paused. The retry is refused, and nothing changes, when a dependency finished without succeeding (retry that one first; the error names it and its result), when a dependency was pruned, or when another job that has not finished holds its --unique key.

            Only the job named is retried: jobs that depend on it and already finished as dependency_failed stay so; retry them too, and they wait for it.
            """,
        usage: "retry <id>",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The finished job to run again.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let job = try connection.call(
            JobsInterface.retry, JobsInterface.GetParameters(id: invocation.jobIDs[0])).job
        if invocation.global.json {
            context.console.write(try JSONOutput.text(job))
        } else {
            context.console.print(job.id.description)
        }
        return .success
    }
}
