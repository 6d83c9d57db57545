import CommandLineParsing
import OrchestratorAPI

/// `orchctl prune --older-than SPAN | --all`: deletes finished jobs and their logs.
enum PruneCommand: OrchctlCommand {
    static let name = "prune"
    static let spec = CommandSpec(
        name: name,
        abstract: "Delete finished jobs with their logs and attempts.",
        discussion: "Give --older-than or --all: a bare prune is refused, so that it never deletes every finished job by accident. orchd already prunes on its own, continuously, by its --retention-age and --retention-count settings. A finished job that an unfinished job depends on is kept. Prints how many jobs were deleted.",
        usage: "prune (--older-than <span> | --all)",
        arguments: [],
        options: Options.specs)

    /// `prune`'s options.
    struct Options: CommandOptions {
        var olderThanUSec: Int64?
        var all = false

        static let bindings: [OptionBinding<Options>] = [
            .value(\.olderThanUSec, "older-than", "span", kind: .timeSpan,
                   help: "Only jobs that finished at least this long ago, e.g. 7d."),
            .flag(\.all, "all", help: "Every finished job."),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let options = Options(decoding: invocation)
        switch (options.olderThanUSec, options.all) {
        case (nil, false):
            throw CommandLineError(
                .missingArgument, "give --older-than SPAN, or --all to delete every finished job", command: spec.name)
        case (.some, true):
            throw CommandLineError(.conflictingOptions, "give either --older-than or --all, not both", command: spec.name)
        default:
            break
        }
        let connection = try context.connect(invocation)
        let parameters = JobsInterface.PruneParameters(olderThanUSec: options.olderThanUSec)
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
