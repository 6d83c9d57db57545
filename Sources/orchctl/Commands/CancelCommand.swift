import CommandLineParsing
import OrchestratorAPI

/// `orchctl cancel ID...`: dequeues jobs or tears down their running processes.
enum CancelCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "cancel",
        abstract: "Cancel jobs: dequeue them, or stop their running processes.",
        discussion: "A running job's whole process group gets SIGTERM, then SIGKILL after orchd's grace period. Each job is cancelled on its own: one that cannot be cancelled is reported and the others still are.",
        usage: "cancel <id> ...",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .oneOrMore, help: "The jobs to cancel.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        var status = ExitCode.success
        var cancelled: [Job] = []
        for id in invocation.jobIDs {
            let reply: JobsInterface.JobsReply
            do {
                reply = try connection.call(JobsInterface.cancel, JobsInterface.IDsParameters(ids: [id]))
            } catch {
                // The daemon refused this one job: report it and go on with the others. A
                // connection failure ends the command.
                guard error.remoteErrorName != nil, error.exitCode != .unavailable else { throw error }
                context.console.printError("Error: \(error.message)")
                if status != .permissionDenied { status = error.exitCode }
                continue
            }
            cancelled += reply.jobs
            if !invocation.global.json { context.console.print("cancelled \(id)") }
        }
        if invocation.global.json {
            context.console.write(try JSONOutput.text(cancelled))
        }
        return status
    }
}
