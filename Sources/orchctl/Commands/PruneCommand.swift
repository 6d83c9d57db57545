import OrchestratorAPI

/// `orchctl prune [--older-than SPAN]`: deletes finished jobs and their logs.
enum PruneCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "prune",
        abstract: "Delete finished jobs with their logs and attempts.",
        discussion: "A finished job that an unfinished job depends on is kept. Prints how many jobs were deleted.",
        usage: "prune [--older-than <span>]",
        arguments: [],
        options: Options.specs)

    /// `prune`'s options.
    struct Options: CommandOptions {
        var olderThanUSec: Int64?

        static let bindings: [OptionBinding<Options>] = [
            .value(\.olderThanUSec, "older-than", "span", kind: .timeSpan,
                   help: "Only jobs that finished at least this long ago, e.g. 7d.", default: "every finished job"),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let parameters = JobsInterface.PruneParameters(olderThanUSec: Options(decoding: invocation).olderThanUSec)
        let reply = try connection.call(JobsInterface.prune, parameters)
        if invocation.global.json {
            context.console.write(try JSONOutput.text(reply))
        } else {
            context.console.print(message(pruned: reply.pruned))
        }
        return .success
    }

    /// `pruned 3 jobs`, `pruned 1 job`.
    static func message(pruned: Int) -> String {
        "pruned \(pruned) \(pruned == 1 ? "job" : "jobs")"
    }
}
