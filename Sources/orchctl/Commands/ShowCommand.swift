import FoundationEssentials
import OrchestratorAPI

/// `orchctl show ID`: every field of one job.
enum ShowCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "show",
        abstract: "Show every field of one job.",
        usage: "show <id>",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The job's ID.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let id = invocation.jobIDs[0]
        let reply = try connection.call("io.orchd.Jobs.Get", JobsInterface.GetParameters(id: id), returning: JobsInterface.JobReply.self)
        if invocation.global.json {
            context.console.write(try JSONOutput.text(reply.job))
        } else {
            context.console.write(render(reply.job, time: context.time, now: Date()))
        }
        return .success
    }

    /// The text form: aligned `key: value` lines, `-` for absent values.
    static func render(_ job: Job, time: TimeFormatter, now: Date) -> String {
        var pairs: [(String, String)] = [
            ("id", job.id.description),
            ("name", job.spec.name ?? "-"),
            ("state", job.state.name),
            ("result", job.state.result.map(JobText.result) ?? "-"),
        ]
        if let result = job.state.result {
            if let code = result.exitCode { pairs.append(("exit code", String(code))) }
            if let signal = result.signal { pairs.append(("signal", String(signal))) }
            if let reason = result.reason { pairs.append(("reason", reason)) }
            if let dependency = result.failedDependency { pairs.append(("failed dependency", dependency.description)) }
        }
        pairs += [("queue", job.spec.queue.rawValue), ("priority", String(job.spec.priority))]
        switch job.spec.command {
        case .argv(let argv): pairs.append(("argv", job.spec.command.displayText + "  (\(argv.count) words)"))
        case .shell: pairs.append(("shell", JobText.command(job)))
        }
        pairs += [
            ("cwd", job.spec.cwd),
            ("after", job.after.isEmpty ? "-" : job.after.map(\.description).joined(separator: ", ")),
            ("attempt", "\(job.attempt) of \(job.maxAttempts)"),
            ("submitted", time.dateTime(job.submittedAt)),
            ("started", job.startedAt.map(time.dateTime) ?? "-"),
            ("finished", job.finishedAt.map(time.dateTime) ?? "-"),
            ("duration", JobText.duration(job, now: now).map(TimeSpan.format) ?? "-"),
            ("submitter uid", String(job.submitterUid)),
            ("pid", job.pid.map { String($0) } ?? "-"),
            ("labels", job.spec.labels.isEmpty ? "-" : job.spec.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")),
        ]
        return KeyValueLines.render(pairs)
    }
}
