import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI

/// `orchctl edit ID [--priority N] [--queue Q] [--at TIME | --delay SPAN] [--name NAME]`:
/// changes a job that has not started.
enum EditCommand: OrchctlCommand {
    static let name = "edit"
    static let spec = CommandSpec(
        name: name,
        abstract: "Change a job that has not started.",
        discussion: "Changes the priority, queue, start time or name of a waiting or queued job (held or not); what is not given stays. A start time ahead makes a queued job wait for it, one that has come queues a waiting job whose dependencies succeeded. A running or finished job cannot be edited (exit status 1), nor moved to a queue that does not exist; one waiting for its next attempt can, and --delay 0 then starts that attempt without the rest of its backoff. Prints 'edited ID'.",
        usage: "edit <id> [--priority <n>] [--queue <queue>] [--at <time> | --delay <span>] [--name <name>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The job to change.")],
        options: Options.specs)

    /// `edit`'s options.
    struct Options: CommandOptions {
        var priority: Int?
        var queue: QueueName?
        var at: StartTime?
        var delayUSec: Int64?
        var name: String?

        static let bindings: [OptionBinding<Options>] = [
            .value(\.priority, "priority", "n", kind: .integer, help: "The new priority; higher runs first."),
            .value(\.queue, "queue", "queue", kind: .queueName, help: "Move the job to this queue."),
            .value(\.at, "at", "time", kind: .startTime, help: "Start no sooner than this time: HH:MM[:SS] (the next such local time), a local date and time ('2030-06-01 08:00'), or RFC 3339; not one more than a minute past."),
            .value(\.delayUSec, "delay", "span", kind: .timeSpan, help: "Start no sooner than this long from now, e.g. 5min."),
            .value(\.name, "name", "name", help: "The new name; an empty one removes it."),
        ]
    }

    /// The `Edit` call's parameters.
    /// - Throws: ``CommandLineError`` when nothing is to change, or both --at and --delay are given.
    static func parameters(_ invocation: Invocation, now: Date = Date()) throws(CommandLineError) -> JobsInterface.EditParameters {
        let options = Options(decoding: invocation)
        var notBefore: Date?
        switch (options.at, options.delayUSec) {
        case (_?, _?): throw CommandLineError(.conflictingOptions, "give either --delay or --at, not both", command: spec.name)
        case (let start?, nil): notBefore = try start.resolveStart(now: now, command: spec.name, startNow: "--delay 0 to let it start now")
        case (nil, let delay?): notBefore = now.addingTimeInterval(Duration(microseconds: delay).timeInterval)
        case (nil, nil): notBefore = nil
        }
        if let notBefore, notBefore.timeIntervalSince1970 >= JobSpec.latestStartSeconds {
            throw CommandLineError(.invalidValue, JobSpecError.startTooLate.message, command: spec.name)
        }
        guard options.priority != nil || options.queue != nil || notBefore != nil || options.name != nil else {
            throw CommandLineError(.missingArgument, "nothing to change: give --priority, --queue, --at, --delay or --name", command: spec.name)
        }
        return JobsInterface.EditParameters(
            id: invocation.jobIDs[0], priority: options.priority, queue: options.queue,
            notBefore: notBefore.map(Timestamp.format), name: options.name)
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let parameters = try parameters(invocation)
        let connection = try context.connect(invocation)
        let job = try connection.call(JobsInterface.edit, parameters).job
        if invocation.global.json {
            context.console.write(try JSONOutput.text(job))
        } else {
            context.console.print("edited \(job.id)")
        }
        return .success
    }
}
