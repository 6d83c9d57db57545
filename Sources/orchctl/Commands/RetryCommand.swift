import CommandLineParsing
import OrchestratorAPI

/// `orchctl retry ID` or `orchctl retry --failed [--queue Q]`: runs finished jobs again.
enum RetryCommand: OrchctlCommand {
    static let name = "retry"
    static let spec = CommandSpec(
        name: name,
        abstract: "Run a finished job again.",
        discussion: """
            The job keeps its ID and gets its next attempt (one more is allowed); 'orchctl show' lists the earlier attempts. Only a finished job can be retried, whatever its result. Prints 'retried ID'.

            The rules of a new job apply again. The job is queued when every job it runs --after has succeeded and its start time (--delay, --at) has come; it waits while a dependency has not finished or its start time is ahead, and runs once they allow. A paused queue stays paused. The retry is refused, and nothing changes, when a dependency finished without succeeding (retry that one first; the error names it and its result), when a dependency was pruned, when another job that has not finished holds its --unique key, or when its queue was removed.

            Only the job named is retried. Jobs that depend on it and are queued but have not started wait for it again and follow its new outcome (a running or finished one keeps what it saw); those that already finished as dependency_failed stay so: retry them too, and they wait for it.

            --failed (instead of an ID) retries every job that finished without succeeding (failed, signaled, timed_out, spawn_failed, dependency_failed, interrupted; not cancelled), of --queue when given, oldest first, and prints how many and which; one that cannot be retried is reported with why (exit status 1).
            """,
        usage: "retry (<id> | --failed [--queue <queue>])",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .optional, help: "The finished job to run again.")],
        options: Options.specs)

    /// `retry`'s options.
    struct Options: CommandOptions {
        var failed = false
        var queue: QueueName?

        static let bindings: [OptionBinding<Options>] = [
            .flag(\.failed, "failed", help: "Retry every job that finished without succeeding (not cancelled)."),
            .value(\.queue, "queue", "queue", kind: .queueName, help: "With --failed, only the jobs of this queue."),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let options = Options(decoding: invocation)
        if options.failed && !invocation.jobIDs.isEmpty {
            throw CommandLineError(.conflictingOptions, "give a job ID or --failed, not both", command: spec.name)
        }
        if options.queue != nil && !options.failed {
            throw CommandLineError(.conflictingOptions, "--queue goes with --failed", command: spec.name)
        }
        guard options.failed else {
            guard let id = invocation.jobIDs.first else {
                throw CommandLineError(.missingArgument, "missing argument '<id>' (or --failed)", command: spec.name)
            }
            let connection = try context.connect(invocation)
            let job = try connection.call(JobsInterface.retry, JobsInterface.GetParameters(id: id)).job
            if invocation.global.json {
                context.console.write(try JSONOutput.text(job))
            } else {
                context.console.print("retried \(job.id)")
            }
            return .success
        }
        let connection = try context.connect(invocation)
        // In pages: a retry of a million failed jobs is not refused for the size of its answer.
        var retried: [Job] = []
        var refused: [JobsInterface.RetryFailedReply.Refusal] = []
        func reportRefused() {
            for refusal in refused {
                context.console.printError("Error: job \(refusal.id) not retried: \(refusal.message)")
            }
        }
        do {
            try connection.streamChange(JobsInterface.retryFailed, JobsInterface.RetryFailedParameters(queue: options.queue), change: "retry") { reply in
                retried += reply.jobs
                refused += reply.refused
                return reply.jobs.count
            }
        } catch {
            // The refusals come first: those received are reported even when the answer is cut short.
            reportRefused()
            throw error
        }
        if invocation.global.json {
            context.console.write(try JSONOutput.text(retried))
        } else {
            context.console.print(BulkText.summary(retried.map(\.id), verb: "retried"))
        }
        reportRefused()
        return refused.isEmpty ? .success : .failure
    }
}
