import CommandLineParsing
import OrchestratorAPI

/// `orchctl suspend ID`: stops a running job's processes.
enum SuspendCommand: OrchctlCommand {
    static let name = "suspend"
    static let spec = CommandSpec(
        name: name,
        abstract: "Stop a running job's processes until it is continued.",
        discussion: "Every process of the job stops: its cgroup is frozen (cgroup.freeze), or where orchd runs without cgroups its process group gets SIGSTOP. The job stays running, shown as suspended, and keeps its slot. Its --timeout goes on counting while it is suspended. Cancelling it, its timeout and a stop of orchd thaw it first, then tear it down as usual. Prints 'suspended ID'.",
        usage: "suspend <id>",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The running job to suspend.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        try SuspendCommand.change(JobsInterface.suspend, verb: "suspended", invocation, context: context)
    }

    /// Calls `method` for the job and prints `verb ID`, as `hold` and `cancel` do (its JSON
    /// with --json).
    static func change(
        _ method: VarlinkMethod<JobsInterface.GetParameters, JobsInterface.JobReply>, verb: String, _ invocation: Invocation,
        context: CommandContext
    ) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let job = try connection.call(method, JobsInterface.GetParameters(id: invocation.jobIDs[0])).job
        if invocation.global.json {
            context.console.write(try JSONOutput.text(job))
        } else {
            context.console.print("\(verb) \(job.id)")
        }
        return .success
    }
}

/// `orchctl continue ID`: lets a suspended job's processes go on.
enum ContinueCommand: OrchctlCommand {
    static let name = "continue"
    static let spec = CommandSpec(
        name: name,
        abstract: "Let a suspended job's processes go on.",
        discussion: "Thaws the job's cgroup (or sends SIGCONT to its process group). Prints 'continued ID'.",
        usage: "continue <id>",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The suspended job.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        try SuspendCommand.change(JobsInterface.resume, verb: "continued", invocation, context: context)
    }
}
