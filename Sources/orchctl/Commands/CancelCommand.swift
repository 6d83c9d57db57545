import CommandLineParsing
import OrchestratorAPI

/// `orchctl cancel ID... | --queue Q | --state S [--signal NAME]`: dequeues jobs or tears
/// down their running processes.
enum CancelCommand: OrchctlCommand {
    static let name = "cancel"
    static let spec = CommandSpec(
        name: name,
        abstract: "Cancel jobs: dequeue them, or stop their running processes.",
        discussion: """
            A running job's whole process group (its cgroup) gets SIGTERM, then SIGKILL after orchd's grace period; --signal sends another signal first instead of SIGTERM (HUP, INT, QUIT, USR1, USR2, ALRM, KILL or TERM, with or without SIG). The jobs are torn down at once; one that cannot be cancelled is reported and the others still are. A job whose main process ended on its own meanwhile keeps its result ('5 ended before it was cancelled: failed(3)'); --signal then goes at once to the processes it left. orchctl returns once the processes are gone; when that takes over a second (a process ignores the first signal and waits for SIGKILL, or Slurm has yet to end a Slurm queue's job), it says so on standard error. Another cancel --signal KILL of the same job (from another shell) ends that wait at once.

            --queue and --state (either or both, instead of IDs) cancel every job that has not finished in that queue and/or state (waiting, queued or running), and print how many and which.
            """,
        usage: "cancel (<id> ... | --queue <queue> | --state <state>) [--signal <name>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .zeroOrMore, help: "The jobs to cancel.")],
        options: Options.specs)

    /// `cancel`'s options.
    struct Options: CommandOptions {
        var queue: QueueName?
        var state: String?
        var signal: String?

        static let bindings: [OptionBinding<Options>] = [
            .value(\.queue, "queue", "queue", kind: .queueName, help: "Cancel every unfinished job of this queue."),
            .value(\.state, "state", "state", kind: .choice(["waiting", "queued", "running"]),
                   help: "Cancel every job in this state (waiting, queued or running)."),
            .value(\.signal, "signal", "name", help: "Send this signal first instead of SIGTERM, e.g. INT, HUP or USR1."),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let options = Options(decoding: invocation)
        let matching = options.queue != nil || options.state != nil
        if matching && !invocation.jobIDs.isEmpty {
            throw CommandLineError(.conflictingOptions, "give job IDs or --queue/--state, not both", command: spec.name)
        }
        if !matching && invocation.jobIDs.isEmpty {
            throw CommandLineError(.missingArgument, "missing argument '<id>' (or --queue <queue>, or --state <state>)", command: spec.name)
        }
        if let name = options.signal, JobsInterface.cancelSignal(named: name) == nil {
            let known = JobsInterface.cancelSignals.sorted { $0.value < $1.value }.map(\.key).joined(separator: ", ")
            throw CommandLineError(.invalidValue, "invalid value for option '--signal': '\(name.visible)' is not one of \(known)", command: spec.name)
        }
        let connection = try context.connect(invocation)
        guard !matching else {
            let call = { () throws(CommandFailure) -> [Job] in
                try Self.jobs(of: connection, JobsInterface.cancelMatching,
                    JobsInterface.CancelMatchingParameters(queue: options.queue, state: options.state, signal: options.signal))
            }
            // Waiting and queued jobs have no processes: a long cancel of many of them is
            // orchd's work on them, not a process ignoring SIGTERM.
            let processesMayRun = options.state == nil || options.state == JobState.running.name
            let jobs = processesMayRun ? try noting(context.console, connection, call) : try call()
            if invocation.global.json {
                context.console.write(try JSONOutput.text(jobs))
            } else {
                // A job whose main process ended on its own meanwhile is named apart, with its result.
                let cancelled = jobs.filter { $0.state.result == .cancelled }
                if !cancelled.isEmpty || jobs.isEmpty {
                    context.console.print(BulkText.summary(cancelled.map(\.id), verb: "cancelled"))
                }
                for job in jobs where job.state.result != .cancelled {
                    context.console.print(Self.outcome(of: job.id, in: [job.id: job]))
                }
            }
            return .success
        }
        var status = ExitCode.success
        var cancelled: [Job] = []
        // One call for all the jobs, so that their teardowns run at once (a call per job waited
        // out each job's grace in turn). orchd cancels none of them when it refuses one: the
        // refused job is reported and left out, and the others are sent again.
        var listing: [JobID: Job]?
        // Whether orchd lets the caller manage other users' jobs; root always. Learnt from
        // orchd's refusal of another user's job: PermissionDenied, or (for an admin) another
        // reason.
        var managesOthers: Bool? = context.uid == 0 ? true : nil
        var given: Set<JobID> = []
        var remaining = invocation.jobIDs.filter { given.insert($0).inserted }
        var wholeCallRefused = false
        while !remaining.isEmpty {
            do {
                cancelled = try noting(context.console, connection) { () throws(CommandFailure) in
                    try Self.jobs(of: connection, JobsInterface.cancel, JobsInterface.CancelParameters(ids: remaining, signal: options.signal))
                }
                if !invocation.global.json {
                    let byID = Dictionary(cancelled.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                    for id in remaining { context.console.print(Self.outcome(of: id, in: byID)) }
                }
                break
            } catch {
                // A refusal of one job: report it and go on with the others. A connection
                // failure ends the command; so does a refusal of the whole call (a full disk).
                guard error.remoteErrorName != nil, error.exitCode != .unavailable else { throw error }
                context.console.printError("Error: \(error.message)")
                if status != .permissionDenied { status = error.exitCode }
                guard let refused = error.remoteJobID, remaining.contains(refused) else {
                    // The whole call refused (a full disk, a lock): no list of jobs to print,
                    // not even an empty one, for the processes may be gone (the error says).
                    wholeCallRefused = true
                    break
                }
                // Each call checks every ID again: left to orchd one at a time, 4,000 IDs of
                // finished jobs took 76 s. One listing (the refused job in it, to learn whose
                // it is) finds the rest of those orchd would refuse for a reason a listing shows.
                if listing == nil, remaining.count > 2 { listing = try Self.listing(of: remaining, from: connection) }
                remaining.removeAll { $0 == refused }
                guard let jobs = listing else { continue }
                if let owner = jobs[refused]?.submitterUid, owner != context.uid {
                    managesOthers = error.remoteErrorName != JobsInterface.Errors.permissionDenied
                }
                let known = Self.refusals(among: remaining, in: jobs, uid: context.uid, managesOthers: managesOthers)
                for id in remaining {
                    guard let refusal = known[id] else { continue }
                    context.console.printError("Error: \(refusal.description)")
                    if refusal.name == JobsInterface.Errors.permissionDenied {
                        status = .permissionDenied
                    } else if status != .permissionDenied {
                        status = .failure
                    }
                }
                remaining.removeAll { known[$0] != nil }
            }
        }
        if invocation.global.json && !wholeCallRefused {
            context.console.write(try JSONOutput.text(cancelled))
        }
        return status
    }

    /// Calls a cancel with `more` and gathers the jobs of its replies: orchd sends them in
    /// pages, so a cancel of a million jobs is not refused for the size of its answer.
    private static func jobs<P>(
        of connection: OrchdConnection, _ method: VarlinkMethod<P, JobsInterface.JobsReply>, _ parameters: P
    ) throws(CommandFailure) -> [Job] {
        var jobs: [Job] = []
        try connection.streamChange(method, parameters, change: "cancel") { reply in
            jobs += reply.jobs
            return reply.jobs.count
        }
        return jobs
    }

    /// The jobs among `ids` that orchd has, whoever owns them, by ID: one `List` call.
    static func listing(of ids: [JobID], from connection: OrchdConnection) throws(CommandFailure) -> [JobID: Job] {
        var found: [JobID: Job] = [:]
        try connection.stream(JobsInterface.list, JobsInterface.ListParameters(ids: ids, allUsers: true)) { (reply) throws(CommandFailure) in
            for job in reply.jobs { found[job.id] = job }
        }
        return found
    }

    /// The jobs among `ids` that orchd would refuse to cancel for a reason `jobs` (a
    /// ``listing(of:from:)``) shows, each with the error it would send: one that does not
    /// exist (`NoSuchJob`); another user's, when the caller manages no one else's
    /// (`PermissionDenied`); and a finished one the caller manages (`AlreadyFinished`).
    /// - Parameter managesOthers: whether orchd lets the caller manage other users' jobs;
    ///   `nil` when not known yet, which leaves their jobs to orchd.
    static func refusals(among ids: [JobID], in jobs: [JobID: Job], uid: UInt32, managesOthers: Bool?) -> [JobID: VarlinkError] {
        var refusals: [JobID: VarlinkError] = [:]
        for id in ids {
            guard let job = jobs[id] else {
                refusals[id] = JobsInterface.noSuchJob(id)
                continue
            }
            let manages = job.submitterUid == uid ? true : managesOthers
            if manages == false {
                refusals[id] = JobsInterface.permissionDenied(id)
            } else if manages == true, job.state.result != nil {
                refusals[id] = JobsInterface.alreadyFinished(id)
            }
        }
        return refusals
    }

    /// How long a cancel may take before orchctl says what it waits for: a teardown that
    /// takes longer waits for processes that ignore the first signal, or for Slurm.
    static let teardownNoteDelay: Duration = .seconds(1)

    /// Runs the cancel call `body`, saying on standard error once it has taken
    /// ``teardownNoteDelay`` that a process has not ended on the first signal, and how to end
    /// it now. On a connection orchd has not answered yet, a `Ping` comes first: a connection
    /// orchd has not accepted (it pauses accepting when short of descriptors), or one it then
    /// refuses, is no teardown under way.
    private static func noting<Value>(
        _ console: Console, _ connection: OrchdConnection, _ body: () throws(CommandFailure) -> Value
    ) throws(CommandFailure) -> Value {
        if !connection.hasReplied { _ = try connection.call(ManagerInterface.ping, VarlinkNoParameters()) }
        return try DelayedNote.during(
            "orchctl: waiting for the processes to end: one that ignores the first signal gets SIGKILL when the grace period ends (orchd's, or Slurm's KillWait for a Slurm queue's job); 'orchctl cancel --signal KILL' ends it now, from another shell too",
            on: console, after: teardownNoteDelay, body)
    }

    /// What became of one job the call cancelled: `cancelled 5`, or, for a job whose main
    /// process ended on its own meanwhile (its leftover processes are torn down all the same,
    /// but the result is its own), `5 ended before it was cancelled: failed(3)`.
    static func outcome(of id: JobID, in jobs: [JobID: Job]) -> String {
        guard let job = jobs[id], let result = job.state.result, result != .cancelled else {
            return "cancelled \(id)"
        }
        return "\(id) ended before it was cancelled: \(JobText.result(result))"
    }
}
