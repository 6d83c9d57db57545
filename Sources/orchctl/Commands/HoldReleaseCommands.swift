import CommandLineParsing
import OrchestratorAPI

/// `orchctl hold ID...`: keeps jobs that have not started from starting.
enum HoldCommand: OrchctlCommand {
    static let name = "hold"
    static let spec = CommandSpec(
        name: name,
        abstract: "Keep jobs that have not started from starting, until released.",
        discussion: "A held job stays waiting or queued, shown as held, and does not start whatever its queue does (the queue is not paused: its other jobs run). It stays held across a restart of orchd. A job that has started cannot be held. Prints each job's ID.",
        usage: "hold <id> ...",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .oneOrMore, help: "The jobs to hold.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        try HoldCommand.change(JobsInterface.hold, verb: "held", invocation, context: context)
    }

    /// Calls `method` for each job on its own, printing `<verb> <id>` for each changed and
    /// reporting each refused; goes on after a refusal.
    static func change(
        _ method: VarlinkMethod<JobsInterface.IDsParameters, JobsInterface.JobsReply>, verb: String, _ invocation: Invocation,
        context: CommandContext
    ) throws -> ExitCode {
        let connection = try context.connect(invocation)
        var status = ExitCode.success
        var changed: [Job] = []
        for id in invocation.jobIDs {
            do {
                changed += try connection.call(method, JobsInterface.IDsParameters(ids: [id])).jobs
            } catch {
                guard error.remoteErrorName != nil, error.exitCode != .unavailable else { throw error }
                context.console.printError("Error: \(error.message)")
                if status != .permissionDenied { status = error.exitCode }
                continue
            }
            if !invocation.global.json { context.console.print("\(verb) \(id)") }
        }
        if invocation.global.json { context.console.write(try JSONOutput.text(changed)) }
        return status
    }
}

/// `orchctl release ID...`: lets held jobs start again.
enum ReleaseCommand: OrchctlCommand {
    static let name = "release"
    static let spec = CommandSpec(
        name: name,
        abstract: "Let held jobs start again.",
        discussion: "A released job starts when its queue has room, as if it had never been held. Prints each job's ID.",
        usage: "release <id> ...",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .oneOrMore, help: "The jobs to release.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        try HoldCommand.change(JobsInterface.release, verb: "released", invocation, context: context)
    }
}
