import CommandLineParsing
#if canImport(Glibc)
import Glibc
#endif
import OrchestratorAPI

/// `orchctl events [--since SEQ] [--follow] [--queue Q] [--job ID]`: lifecycle events, one
/// JSON object per line, from `io.orchd.Jobs.Subscribe`.
enum EventsCommand: OrchctlCommand {
    static let name = "events"
    static let spec = CommandSpec(
        name: name,
        abstract: "Print job and queue events as JSON lines.",
        discussion: """
            Prints the events orchd still retains, oldest first, one JSON object per line, keys in alphabetical order: at, attempt, exitCode, jobId, kind, ownerUid, previousState, queue, result, seq, signal, state (null when they do not apply). Kinds: submitted, queued, started, retrying, requeued, finished, cancelled, queue_paused, queue_resumed, queue_drained, daemon_ready, daemon_stopping.

            With --follow, goes on with each new event as orchd records it, until interrupted (Ctrl-C) or until whatever reads the output goes away; either ends it with exit status 0. Each line is written as soon as its event arrives, so a pipe sees it at once. To resume without missing an event still retained, pass the last seq seen to --since. When orchd restarts (or its connection is lost), orchctl says so once on standard error, reconnects for up to --reconnect-timeout and goes on after the last event it printed.

            --queue and --job name a queue or job orchd knows or still retains events of (a removed queue's and a pruned job's history stays readable); any other name is an error (exit status 1), so a typo does not read as "no events"; another user's job is refused (exit status 77) unless you are an admin.

            The output is always JSON; --json is accepted and changes nothing.
            """,
        usage: "events [--since <seq>] [--follow] [--queue <queue>] [--job <id>]",
        arguments: [],
        options: Options.specs)

    /// `events`' options.
    struct Options: CommandOptions {
        var since: Int64?
        var follow = false
        var queue: QueueName?
        var job: JobID?
        var reconnectTimeout: Duration?

        static let bindings: [OptionBinding<Options>] = [
            .value(\.since, "since", "seq", kind: .integerIn(0...Int.max),
                   help: "Only events with a larger sequence number.", default: "every retained event"),
            .flag(\.follow, "follow", help: "Keep printing new events until interrupted."),
            .value(\.queue, "queue", "queue", kind: .queueName, help: "Only events of this queue and its jobs."),
            .value(\.job, "job", "id", kind: .jobID, help: "Only events of this job."),
            .value(\.reconnectTimeout, "reconnect-timeout", "span", kind: .timeSpan, help: Reconnection.optionHelp, default: "1min"),
        ]
    }

    /// The `Subscribe` call's parameters; options not given are left out.
    static func parameters(_ invocation: Invocation) -> JobsInterface.SubscribeParameters {
        let options = Options(decoding: invocation)
        return JobsInterface.SubscribeParameters(
            since: options.since, follow: options.follow ? true : nil, queue: options.queue, jobId: options.job)
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let parameters = parameters(invocation)
        let reconnection = try Reconnection(context: context, invocation: invocation, timeout: Options(decoding: invocation).reconnectTimeout)
        try StreamSession.run(follow: true, context: context, invocation: invocation) {
            (_, _, console) throws(CommandFailure) in
            try stream(parameters, reconnection: reconnection, console: console)
        }
        return .success
    }

    /// Subscribes and writes each event as a line, until orchd ends the stream or nothing
    /// reads the output any more (`EPIPE`, a normal end). When orchd restarts meanwhile,
    /// `reconnection` subscribes again after the last event written, so none is written twice.
    /// - Throws: ``CommandFailure`` when orchd cannot be reached or fails, or the output
    ///   cannot be written for another reason (a full disk).
    static func stream(
        _ parameters: JobsInterface.SubscribeParameters, reconnection: Reconnection, console: Console
    ) throws(CommandFailure) {
        var parameters = parameters
        let line = EventLine()
        var connections = 0
        try reconnection.run { (connection) throws(CommandFailure) in
            // A reconnect resumes the stream after the last event printed (or --since, when
            // none was yet): orchd then says so if retention dropped events meanwhile, instead
            // of skipping them. A follow that printed nothing and had no --since has no gap to
            // tell (it asked for whatever is retained).
            if connections > 0, parameters.since != nil { parameters.resume = true }
            connections += 1
            try connection.streamWhile(JobsInterface.subscribe, parameters) {
                (reply) throws(CommandFailure) -> Bool in
                // An empty backlog is one reply without an event.
                guard let event = reply.event else { return true }
                switch console.writeOutputChecked(try line.bytes(event)) {
                case 0:
                    parameters.since = event.seq
                    return true
                case EPIPE: return false
                case let code: throw CommandFailure("cannot write to standard output: \(String(cString: strerror(code)))")
                }
            }
        }
    }
}
