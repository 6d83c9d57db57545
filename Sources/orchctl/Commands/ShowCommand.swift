import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI

/// `orchctl show ID`: every field of one job.
enum ShowCommand: OrchctlCommand {
    static let name = "show"
    static let spec = CommandSpec(
        name: name,
        abstract: "Show every field of one job.",
        usage: "show <id>",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The job's ID.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let id = invocation.jobIDs[0]
        let reply = try connection.call(JobsInterface.get, JobsInterface.GetParameters(id: id))
        let attempts = reply.attempts ?? []
        if invocation.global.json {
            context.console.write(try JSONOutput.text(JobWithAttempts(job: reply.job, attempts: attempts)))
        } else {
            context.console.write(render(reply.job, attempts: attempts, time: context.time, now: Date()))
        }
        return .success
    }

    /// For a job between attempts (waiting for a retry, or queued for one): which attempt is
    /// next, as `status` shows it (`retrying(2/4)`); empty otherwise.
    static func nextAttempt(_ job: Job) -> String {
        switch job.state {
        case .waiting, .queued: job.attempt > 0 ? "; attempt \(job.attempt + 1) waits to start" : ""
        default: ""
        }
    }

    /// The text form: aligned `key: value` lines, `-` for absent values, then the finished
    /// attempts, one line each. Text a submitter chose (name, command, working directory,
    /// labels, unique key, reason) has its control characters made visible, so a job cannot
    /// move the cursor or retitle the terminal of an admin who looks at it.
    static func render(_ job: Job, attempts: [JobAttempt] = [], time: TimeFormatter, now: Date) -> String {
        var pairs: [(String, String)] = [
            ("id", job.id.description),
            ("name", job.spec.name?.visible ?? "-"),
            ("state", job.state.name + (job.held ? " (held)" : "") + (job.suspended ? " (suspended)" : "")),
            ("result", job.state.result.map(JobText.result) ?? "-"),
        ]
        if let result = job.state.result {
            if let code = result.exitCode { pairs.append(("exit code", String(code))) }
            if let signal = result.signal { pairs.append(("signal", String(signal))) }
            if let reason = result.reason { pairs.append(("reason", reason.visible)) }
            if let dependency = result.failedDependency { pairs.append(("failed dependency", dependency.description)) }
        }
        pairs += [("queue", job.spec.queue.rawValue), ("priority", String(job.spec.priority))]
        switch job.spec.command {
        case .argv(let argv): pairs.append(("argv", job.spec.command.displayText.visible + "  (\(argv.count) \(argv.count == 1 ? "word" : "words"))"))
        case .shell: pairs.append(("shell", JobText.command(job)))
        }
        pairs += [
            ("cwd", job.spec.cwd.visible),
            ("after", job.after.isEmpty ? "-" : job.after.map(\.description).joined(separator: ", ")),
            // The attempts allowed are said here once (`--json` keeps both fields).
            ("attempt", "\(job.attempt) of \(job.maxAttempts)" + Self.nextAttempt(job)),
            // Rounded up only while ahead: a start time passed reads as the times beside it,
            // so it never reads later than the start it allowed.
            ("not before", job.spec.notBefore.map { $0 > now ? time.dateTimeAhead($0) : time.dateTime($0) } ?? "-"),
            ("timeout", job.spec.timeoutUSec.map { TimeSpan.format(Duration(microseconds: $0)) } ?? "-"),
            ("unique key", job.spec.uniqueKey?.visible ?? "-"),
            ("submitted", time.dateTime(job.submittedAt)),
            ("started", job.startedAt.map(time.dateTime) ?? "-"),
            ("finished", job.finishedAt.map(time.dateTime) ?? "-"),
            ("duration", JobText.duration(job, now: now).map(TimeSpan.format) ?? "-"),
            ("submitter uid", String(job.submitterUid)),
            ("pid", job.pid.map { String($0) } ?? "-"),
            ("labels", job.spec.labels.isEmpty ? "-" : job.spec.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)".visible }.joined(separator: ", ")),
        ]
        if let slurmJob = job.slurmJobId {
            pairs.insert(("slurm job", slurmJob), at: pairs.count - 1)
        }
        var text = KeyValueLines.render(pairs)
        if !attempts.isEmpty {
            text += "attempts:\n"
            let results = attempts.map { JobText.result($0.result) }
            let numberWidth = attempts.map { String($0.attempt).count }.max() ?? 1
            let resultWidth = results.map(\.count).max() ?? 0
            for (attempt, result) in zip(attempts, results) {
                let number = String(attempt.attempt)
                text += "  " + String(repeating: " ", count: numberWidth - number.count) + number
                text += "  " + result + String(repeating: " ", count: resultWidth - result.count)
                text += "  started " + (attempt.startedAt.map(time.dateTime) ?? "-")
                text += "  finished " + time.dateTime(attempt.finishedAt)
                text += attempt.slurmJobId.map { "  slurm job " + $0 } ?? ""
                text += "\n"
            }
        }
        return text
    }
}

/// `show --json`: the job object with its finished attempts as the field `attempts`.
struct JobWithAttempts: Encodable {
    var job: Job
    var attempts: [JobAttempt]

    private enum CodingKeys: String, CodingKey { case attempts }

    func encode(to encoder: any Encoder) throws {
        // Both write into the same JSON object.
        try job.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(attempts, forKey: .attempts)
    }
}
