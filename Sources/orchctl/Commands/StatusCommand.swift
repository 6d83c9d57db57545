import FoundationEssentials
import OrchestratorAPI

/// `orchctl status [ID...] [--queue Q] [--state S]`: a table of jobs and a summary.
enum StatusCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "status",
        abstract: "List jobs with their state, queue and times.",
        discussion: "Without IDs, lists every job the daemon keeps. Finished jobs show their result: succeeded, failed(CODE), signaled(SIGNAL), cancelled, timed_out, spawn_failed, dependency_failed(ID) or interrupted.",
        usage: "status [<id> ...] [--queue <queue>] [--state <state>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .zeroOrMore, help: "Only these jobs.")],
        options: [
            .value("queue", "queue", kind: .queueName, help: "Only jobs in this queue."),
            .value("state", "state", kind: .choice(JobState.names),
                   help: "Only jobs in this state: waiting, queued, running or finished."),
        ])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let ids = invocation.jobIDs
        let parameters = JobsInterface.ListParameters(
            ids: ids.isEmpty ? nil : ids,
            queue: invocation.value("queue").flatMap(QueueName.init(rawValue:)),
            state: invocation.value("state"))
        let reply = try connection.call("io.orchd.Jobs.List", parameters, returning: JobsInterface.JobsReply.self)
        if invocation.global.json {
            context.console.write(try JSONOutput.text(reply.jobs))
        } else {
            let width = context.console.outputIsTerminal ? (context.console.terminalColumns ?? 80) : nil
            let table = JobTable(time: context.time, maximumWidth: width)
            context.console.write(table.render(reply.jobs, now: Date()))
        }
        return .success
    }
}
