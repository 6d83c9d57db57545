import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI

/// `orchctl status [ID...] [--queue Q] [--state S] [--limit N | --all]`: a table of jobs and
/// a summary.
enum StatusCommand: OrchctlCommand {
    /// How many jobs `status` shows without `--limit` or `--all`.
    static let defaultLimit = 100

    static let spec = CommandSpec(
        name: "status",
        abstract: "List jobs with their state, queue and times.",
        discussion: "Without IDs, lists the newest 100 matching jobs (see --limit and --all), in ID order, then the job counts of orchd (or of the queue given with --queue). On a shared orchd you see your own jobs (root and the admin group see every job); --all-users lists everyone's, as ps does. Finished jobs show their result: succeeded, failed(CODE), signaled(SIGNAL), cancelled, timed_out, spawn_failed, dependency_failed(ID) or interrupted; a job waiting for its next attempt shows retrying(ATTEMPT/MAX).",
        usage: "status [<options>] [<id> ...]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .zeroOrMore, help: "Only these jobs.")],
        options: Options.specs)

    /// `status`' options.
    struct Options: CommandOptions {
        var queue: QueueName?
        var state: String?
        var limit: Int?
        var all = false
        var allUsers = false

        static let bindings: [OptionBinding<Options>] = [
            .value(\.queue, "queue", "queue", kind: .queueName, help: "Only jobs in this queue."),
            .value(\.state, "state", "state", kind: .choice(JobState.names),
                   help: "Only jobs in this state: waiting, queued, running or finished."),
            .value(\.limit, "limit", "n", kind: .integerIn(1...Int.max), help: "Show only the newest N matching jobs.", default: "100"),
            .flag(\.all, "all", help: "Show every matching job."),
            .flag(\.allUsers, "all-users", help: "Show every user's jobs, not only yours; other users' with their owner, state and command only."),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let options = Options(decoding: invocation)
        if options.all && options.limit != nil {
            throw CommandLineError(.conflictingOptions, "give either --limit or --all, not both", command: spec.name)
        }
        let connection = try context.connect(invocation)
        let ids = invocation.jobIDs
        let queue = options.queue
        let state = options.state
        let parameters = JobsInterface.ListParameters(
            ids: ids.isEmpty ? nil : ids, queue: queue, state: state, allUsers: options.allUsers ? true : nil)

        // Named IDs are shown whatever the limit; otherwise one more than the limit is asked
        // for, so a cut list is known to be cut without trusting the counts.
        let limit = ids.isEmpty && !options.all ? options.limit ?? defaultLimit : nil
        var limited = parameters
        if let limit { limited.limit = limit == Int.max ? limit : limit + 1 }
        // With `more`, the jobs come in pages: no reply outgrows the message cap.
        var jobs: [Job] = []
        try connection.stream(JobsInterface.list, limited) { (reply) throws(CommandFailure) in
            jobs += reply.jobs
        }
        let hidden = limit.map { jobs.count > $0 } ?? false
        if let limit, hidden { jobs.removeFirst(jobs.count - limit) }

        // The counts for the summary and for how many jobs a cut list hides.
        var counts: JobCounts?
        if ids.isEmpty && (!invocation.global.json || hidden) {
            counts = try self.counts(queue: queue, connection: connection)
        }
        let note = hidden ? JobTable.truncation(shown: jobs.count, total: max(total(counts, state: state), jobs.count + 1), state: state) : nil

        if invocation.global.json {
            context.console.write(try JSONOutput.text(jobs))
            if let note { context.console.printError("Note: " + note) }
            return .success
        }
        let width = context.console.outputIsTerminal ? (context.console.terminalColumns ?? 80) : nil
        context.console.write(render(jobs, counts: counts, queue: queue, note: note,
                                     table: JobTable(time: context.time, maximumWidth: width, showsOwner: options.allUsers), now: Date()))
        return .success
    }

    /// The text output: the table, the summary (orchd's counts, or over `jobs` when there
    /// are none), and the truncation note when the limit hid jobs.
    static func render(_ jobs: [Job], counts: JobCounts?, queue: QueueName?, note: String?, table: JobTable, now: Date) -> String {
        var text = table.render(jobs, now: now)
        if let counts {
            if counts.live + counts.finished > 0 { text += JobTable.summary(counts, queue: queue) + "\n" }
        } else if !jobs.isEmpty {
            text += JobTable.summary(jobs) + "\n"
        }
        if let note { text += note + "\n" }
        return text
    }

    /// How many jobs match the state filter, by the counts.
    private static func total(_ counts: JobCounts?, state: String?) -> Int {
        guard let counts else { return 0 }
        return switch state {
        case "waiting": counts.waiting
        case "queued": counts.queued
        case "running": counts.running
        case "finished": counts.finished
        default: counts.live + counts.finished
        }
    }

    /// orchd's job counts: of one queue (io.orchd.Queues.List), or of all
    /// (io.orchd.Manager.GetInfo).
    private static func counts(queue: QueueName?, connection: OrchdConnection) throws(CommandFailure) -> JobCounts {
        if let queue {
            let queues = try connection.call(QueuesInterface.list, QueuesInterface.NamesParameters(names: [queue])).queues
            return queues.first { $0.name == queue }?.jobs ?? JobCounts()
        }
        return try connection.call(ManagerInterface.getInfo, VarlinkNoParameters()).jobs
    }
}
