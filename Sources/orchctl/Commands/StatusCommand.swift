import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI

/// `orchctl status [ID...] [--queue Q] [--state S] [--result R] [--label K=V]... [--limit N | --all]`:
/// a table of jobs, running ones first, and a summary. Also what `orchctl` alone runs.
enum StatusCommand: OrchctlCommand {
    /// How many jobs `status` shows without `--limit` or `--all`.
    static let defaultLimit = 100

    static let name = "status"
    static let spec = CommandSpec(
        name: name,
        abstract: "List jobs with their state, queue and times.",
        discussion: """
            Without IDs, lists the running jobs first, then the newest 100 other matching jobs (see --limit and --all) in ID order, then the job counts of orchd (or of the queue given with --queue). With IDs, lists those jobs and counts them alone; an ID orchd has no job for (or that is another user's) is an error on standard error, as for show, and status exits 1 (77 for another user's) after listing the others. 'orchctl' with no command runs 'orchctl status'. On a shared orchd you see your own jobs (root and the admin group see every job); --all-users lists everyone's, as ps does. Finished jobs show their result: succeeded, failed(CODE), signaled(SIGNAL), cancelled, timed_out, spawn_failed, dependency_failed(ID) or interrupted; a job waiting for its next attempt shows retrying(ATTEMPT/MAX). A job that has not started yet, or waits for its next attempt, shows under STARTED when it may start, if that is ahead ('in 4m'), else '-'. A NAME column appears when any listed job has a name.

            On a terminal, times are shown as distances ('4m ago'), states are coloured (see --color) and every line fits the terminal's width ($COLUMNS, else the terminal's own): the command is cut with '…', and on a narrow terminal PRI, SUBMITTED, DURATION, QUEUE and STARTED go, in that order. Widths count terminal columns, so CJK and emoji names line up. Piped, times are clock times and nothing is coloured or fitted to a width; a name past 24 columns and a command past 500 are still cut with '…' (--json has them whole).

            With --json, prints a JSON array of job objects in ID order (the fields of io.orchd.Jobs.Job).
            """,
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
        var result: String?
        var labels: [String: String] = [:]
        var color = ColorMode.auto.rawValue

        static let bindings: [OptionBinding<Options>] = [
            .value(\.queue, "queue", "queue", kind: .queueName, help: "Only jobs in this queue."),
            .value(\.state, "state", "state", kind: .choice(JobState.names),
                   help: "Only jobs in this state: waiting, queued, running or finished."),
            .value(\.result, "result", "result", kind: .choice(JobResult.names),
                   help: "Only finished jobs with this result: succeeded, failed, signaled, timed_out, cancelled, spawn_failed, dependency_failed or interrupted."),
            .keyValues(\.labels, "label", "key=value", help: "Only jobs with this label (submit --label); all given must match."),
            .value(\.color, "color", "when", kind: .choice(ColorMode.names), help: ColorMode.optionHelp, default: "auto"),
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
        if options.result != nil, let state = options.state, state != "finished" {
            throw CommandLineError(.conflictingOptions, "--result lists finished jobs; it cannot be used with --state \(state)", command: spec.name)
        }
        let connection = try context.connect(invocation)
        let ids = invocation.jobIDs
        let queue = options.queue
        let state = options.state
        let labels = options.labels.isEmpty ? nil : options.labels
        let parameters = JobsInterface.ListParameters(
            ids: ids.isEmpty ? nil : ids, queue: queue, state: state, allUsers: options.allUsers ? true : nil,
            result: options.result, labels: labels)

        // Named IDs are shown whatever the limit; otherwise one more than the limit is asked
        // for, so a cut list is known to be cut without trusting the counts.
        let limit = ids.isEmpty && !options.all ? options.limit ?? defaultLimit : nil
        var limited = parameters
        if let limit { limited.limit = limit == Int.max ? limit : limit + 1 }
        var jobs = try list(limited, connection: connection)
        let hidden = limit.map { jobs.count > $0 } ?? false
        if let limit, hidden { jobs.removeFirst(jobs.count - limit) }

        // However many newer jobs there are, the running ones are shown (a backlog of
        // thousands must not hide what is happening now).
        var running: [Job] = []
        if ids.isEmpty && state == nil && options.result == nil && hidden {
            var runningParameters = parameters
            runningParameters.state = JobState.running.name
            let shown = Set(jobs.map(\.id))
            running = try list(runningParameters, connection: connection).filter { !shown.contains($0.id) }
        }

        // A named ID listed nowhere, with no filter that could leave it out: said as show,
        // cancel and wait say it (no such job, or not the caller's), after the list.
        var missing: [CommandFailure] = []
        if !ids.isEmpty, queue == nil, state == nil, options.result == nil, labels == nil {
            let listed = Set(jobs.map(\.id))
            for id in ids where !listed.contains(id) {
                do {
                    _ = try connection.call(JobsInterface.get, JobsInterface.GetParameters(id: id))
                } catch {
                    guard error.remoteErrorName != nil, error.exitCode != .unavailable else { throw error }
                    missing.append(error)
                }
            }
        }

        // Nothing listed for a queue: say so when no such queue exists (a typo), as pause does.
        if let queue, jobs.isEmpty, running.isEmpty, ids.isEmpty {
            let known = try connection.call(QueuesInterface.list, QueuesInterface.NamesParameters()).queues.map(\.name)
            if !known.contains(queue) {
                throw CommandFailure("no queue named '\(queue)'; the queues are \(known.map(\.rawValue).joined(separator: ", "))")
            }
        }

        // The counts for the summary and for how many jobs a cut list hides.
        var counts: JobCounts?
        if ids.isEmpty && (!invocation.global.json || hidden) {
            counts = try self.counts(queue: queue, connection: connection)
        }
        var note: String?
        if hidden {
            note = options.result != nil || labels != nil
                ? JobTable.truncation(shown: jobs.count, total: nil)
                : JobTable.truncation(shown: jobs.count, total: max(total(counts, state: state), jobs.count + 1), state: state)
        }

        if invocation.global.json {
            context.console.write(try JSONOutput.text((running + jobs).sorted { $0.id < $1.id }))
            if let note { context.console.printError("Note: " + note) }
            return report(missing, context: context)
        }
        // An admin's status lists every user's jobs even without --all-users: then whose each is shows too.
        let showsOwner = options.allUsers || (running + jobs).contains { $0.submitterUid != context.uid }
        let table = JobTable(
            time: context.time, maximumWidth: context.tableWidth, showsOwner: showsOwner,
            userNames: showsOwner ? try connection.userNames(Set((running + jobs).map(\.submitterUid))) : [:],
            relativeTimes: context.console.outputIsTerminal, colors: context.colors(ColorMode(rawValue: options.color) ?? .auto))
        if !(jobs.isEmpty && !missing.isEmpty) {
            context.console.write(render(runningFirst(running + jobs), counts: counts, queue: queue, note: note, table: table, now: Date()))
        }
        return report(missing, context: context)
    }

    /// Prints the errors of named jobs that were not listed, one line each.
    /// - Returns: success when there are none; else 77 when one was another user's, else 1.
    private static func report(_ missing: [CommandFailure], context: CommandContext) -> ExitCode {
        for error in missing { context.console.printError("Error: \(error.message)") }
        guard let first = missing.first else { return .success }
        return missing.contains { $0.exitCode == .permissionDenied } ? .permissionDenied : first.exitCode
    }

    /// Every job `parameters` lists; with `more`, the jobs come in pages, so no reply
    /// outgrows the message cap.
    private static func list(_ parameters: JobsInterface.ListParameters, connection: OrchdConnection) throws(CommandFailure) -> [Job] {
        var jobs: [Job] = []
        try connection.stream(JobsInterface.list, parameters) { (reply) throws(CommandFailure) in
            jobs += reply.jobs
        }
        return jobs
    }

    /// The running jobs first, then the others, each in ID order.
    static func runningFirst(_ jobs: [Job]) -> [Job] {
        let sorted = jobs.sorted { $0.id < $1.id }
        return sorted.filter { $0.state == .running } + sorted.filter { $0.state != .running }
    }

    /// The text output: the table, the truncation note when the limit hid jobs, and last the
    /// summary (orchd's counts, or over `jobs` when there are none; nothing after "No jobs."
    /// when orchd, or the queue, has none at all).
    static func render(_ jobs: [Job], counts: JobCounts?, queue: QueueName?, note: String?, table: JobTable, now: Date) -> String {
        var text = table.render(jobs, now: now)
        if let note { text += note + "\n" }
        if let counts {
            if counts.live + counts.finished > 0 { text += JobTable.summary(counts, queue: queue) + "\n" }
        } else if !jobs.isEmpty {
            text += JobTable.summary(jobs) + "\n"
        }
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
    /// (io.orchd.Manager.GetInfo); `nil` for a queue that was removed (its finished jobs are
    /// still listed, and counted by the listing).
    private static func counts(queue: QueueName?, connection: OrchdConnection) throws(CommandFailure) -> JobCounts? {
        if let queue {
            let queues = try connection.call(QueuesInterface.list, QueuesInterface.NamesParameters(names: [queue])).queues
            return queues.first { $0.name == queue }?.jobs
        }
        return try connection.call(countsOnly, VarlinkNoParameters()).jobs
    }

    /// `GetInfo` read for the job counts alone.
    private static let countsOnly = ManagerInterface.getInfo.decodingReply(
        as: ManagerInterface.JobCountsReply.self, reading: ManagerInterface.JobCountsReply.read)
}
