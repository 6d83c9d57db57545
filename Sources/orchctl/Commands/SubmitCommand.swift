import CommandLineParsing
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import OrchestratorAPI

/// `orchctl submit`: queues one job, capturing the caller's environment and directory.
enum SubmitCommand: OrchctlCommand {
    static let name = "submit"
    static let spec = CommandSpec(
        name: name,
        abstract: "Queue a command as a job.",
        discussion: """
            The words after '--' are the job's argument vector, run exactly as given without a shell; --shell runs a string with /bin/sh -c instead. The job gets your environment and working directory. Prints the new job's ID alone, so 'id=$(orchctl submit -- make)' works.

            With --batch, every non-empty line of the file that does not start with '#' is one job: a line starting with '{' is a JSON job spec (fields argv or shell, cwd, environment, queue, priority, name, labels, after, notBefore, timeoutUSec, maxAttempts, uniqueKey), any other line a shell command line as with --shell. The other options are defaults for every line; a JSON line's fields replace them. Prints the new IDs one per line, in file order. Every line is read first: nothing is submitted when one cannot be read (exit 64). Up to 2,000 jobs (or 512 KiB, whichever comes first) are stored in one transaction, all or none; a bigger file is sent in several, and if orchd refuses one, the jobs of the earlier ones stay queued, their IDs are printed, and a note says up to which line.

            While orchd stops (a restart), it refuses new jobs and stores none of them; submit says so once on standard error and sends them again until an orchd takes them, for up to --reconnect-timeout (then exit 69), so a job is stored once.
            """,
        usage: "submit [<options>] (--shell <string> | -- <argv> ... | --batch <file>)",
        arguments: [ArgumentSpec(name: "argv", kind: .text, arity: .zeroOrMore,
                                 help: "The command and its arguments, after '--'; passed verbatim, options included.")],
        options: Options.specs,
        takesTrailingArguments: true)

    /// `submit`'s options.
    struct Options: CommandOptions {
        var shell: String?
        var batch: String?
        var queue = QueueName.default
        var priority = 0
        var after: [JobID] = []
        var delayUSec: Int64?
        var at: StartTime?
        var timeoutUSec: Int64?
        var retries = 0
        var unique: String?
        var reuse = false
        var name: String?
        var labels: [String: String] = [:]
        var cwd: String?
        var environment: [String: String] = [:]
        var wait = false
        var reconnectTimeout: Duration?

        static let bindings: [OptionBinding<Options>] = [
            .value(\.shell, "shell", "string", help: "Run this string with /bin/sh -c instead of an argument vector."),
            .value(\.batch, "batch", "file", help: "Submit one job per line of this file ('-' for standard input)."),
            .value(\.queue, "queue", "queue", kind: .queueName, help: "The queue to run the job in.", default: "default"),
            .value(\.priority, "priority", "n", kind: .integer, help: "Higher runs first; equal priorities run in submission order.", default: "0"),
            .values(\.after, "after", "id", kind: .jobID, help: "Start only after this job has succeeded; if it does not, the job ends as dependency_failed."),
            .value(\.delayUSec, "delay", "span", kind: .timeSpan, help: "Start no sooner than this long from now, e.g. 30s, 5min, 2h."),
            .value(\.at, "at", "time", kind: .startTime, help: "Start no sooner than this time: HH:MM[:SS] (the next such local time), a local date and time ('2030-06-01 08:00', or a date alone for its midnight), or RFC 3339 (2030-06-01T08:00:00Z, offsets allowed). A date and time more than a minute past is refused."),
            .value(\.timeoutUSec, "timeout", "span", kind: .timeSpan, help: "Stop a run that takes longer than this; it ends as timed_out."),
            .value(\.retries, "retries", "n", kind: .integerIn(0...999), help: "Run a failed, signaled, timed-out or interrupted job again up to N times (0-999), with growing backoff.", default: "0"),
            .value(\.unique, "unique", "key", help: "Refuse the job while another of your jobs with this key has not finished."),
            .flag(\.reuse, "reuse", help: "With --unique: when such a job exists, print its ID and exit 0 instead of failing."),
            .value(\.name, "name", "name", help: "A name to show for the job; an empty one gives none."),
            .keyValues(\.labels, "label", "key=value", help: "A label to attach to the job; a key given again takes the later value."),
            .value(\.cwd, "cwd", "dir", help: "The directory the job starts in.", default: "the current directory"),
            .keyValues(\.environment, "env", "key=value", help: "Set a variable in the job's environment, over your own; a name given again takes the later value, as with env(1)."),
            .flag(\.wait, "wait", help: "Print the ID, wait for the job to finish and exit with its status (128+SIGNAL when signaled, 124 when timed out, 127 when it could not start, 1 when cancelled)."),
            .value(\.reconnectTimeout, "reconnect-timeout", "span", kind: .timeSpan,
                   help: "While orchd stops (a restart) and refuses new jobs, keep submitting again this long; with --wait, also reconnect this long when orchd goes away and wait on. 0 gives up at once.", default: "1min"),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let options = Options(decoding: invocation)
        // Every job of the call gets the caller's environment as read: say what that changed.
        for change in context.environmentChanges { context.console.printError("Warning: environment variable \(change)") }
        if let batch = options.batch {
            return try runBatch(batch, options, invocation, context: context)
        }
        let jobSpec = try makeSpec(options, trailing: invocation.trailing, context: context)
        var connection = try context.connect(invocation)
        let parameters = JobsInterface.SubmitParameters(spec: jobSpec, reuseExisting: options.reuse ? true : nil)
        // A restart of orchd: through a stop that refuses the job, then (with --wait) the wait.
        let reconnection = try Reconnection(context: context, invocation: invocation, timeout: options.reconnectTimeout)
        let id: JobID
        if invocation.global.json {
            let submitted = try reconnection.runRefusedWhileStopping(on: &connection) { (connection) throws(CommandFailure) in
                try connection.call(JobsInterface.submit, parameters).job
            }
            guard options.wait else {
                context.console.write(try JSONOutput.text(submitted))
                return .success
            }
            id = submitted.id
            let start = JobsInterface.JobStartsReply.JobStart(
                id: id, state: submitted.state.name, notBefore: submitted.spec.notBefore, held: submitted.held, queue: submitted.spec.queue)
            WaitCommand.notePausedQueues(of: [start], on: connection, console: context.console)
        } else if options.wait {
            let submitForStart = JobsInterface.submit.decodingReply(as: JobsInterface.JobStartReply.self, reading: JobsInterface.JobStartReply.read)
            let submitted = try reconnection.runRefusedWhileStopping(on: &connection) { (connection) throws(CommandFailure) in
                try connection.call(submitForStart, parameters).job
            }
            id = submitted.id
            // The ID goes out first, so a caller sees which job it is waiting for.
            context.console.print(id.description)
            WaitCommand.notePausedQueues(of: [submitted], on: connection, console: context.console)
        } else {
            let submitForID = JobsInterface.submit.decodingReply(as: JobsInterface.JobIDReply.self, reading: JobsInterface.JobIDReply.read)
            id = try reconnection.runRefusedWhileStopping(on: &connection) { (connection) throws(CommandFailure) in
                try connection.call(submitForID, parameters).job.id
            }
            context.console.print(id.description)
            return .success
        }
        // The job is stored: when orchd restarts meanwhile, the wait goes on for it.
        let state: JobState
        if invocation.global.json {
            let finished = try Self.prunedFirst(id) { () throws(CommandFailure) in
                try reconnection.run(with: connection) { (connection) throws(CommandFailure) -> [Job] in
                    try connection.call(JobsInterface.wait, JobsInterface.IDsParameters(ids: [id])).jobs
                }
            }
            guard let job = finished.first(where: { $0.id == id }) else { throw Self.noResult(id) }
            context.console.write(try JSONOutput.text(job))
            state = job.state
        } else {
            // The ID and state are all the exit status needs: the whole job is not decoded.
            let waitForEnd = JobsInterface.wait.decodingReply(as: JobsInterface.JobEndsReply.self, reading: JobsInterface.JobEndsReply.read)
            let finished = try Self.prunedFirst(id) { () throws(CommandFailure) in
                try reconnection.run(with: connection) { (connection) throws(CommandFailure) -> [JobsInterface.JobEndsReply.JobEnd] in
                    try connection.call(waitForEnd, JobsInterface.IDsParameters(ids: [id])).jobs
                }
            }
            guard let job = finished.first(where: { $0.id == id }) else { throw Self.noResult(id) }
            state = job.state
        }
        guard let result = state.result else { throw Self.noResult(id) }
        if case .spawnFailed(let reason) = result {
            // Otherwise only `show` would tell why the exit status is 127.
            context.console.printError("Error: job \(id) could not start: \(reason)")
        }
        return ExitCode(result.shellExitStatus)
    }

    /// Runs the wait for the job just submitted, saying what an unknown ID means there: only
    /// finished jobs are deleted, so the job ran and ended, and a retention limit (or a prune)
    /// deleted it before the wait reached orchd, which then has no result to give.
    private static func prunedFirst<T>(_ id: JobID, _ wait: () throws(CommandFailure) -> T) throws(CommandFailure) -> T {
        do {
            return try wait()
        } catch where error.remoteErrorName == JobsInterface.Errors.noSuchJob {
            throw CommandFailure(
                "job \(id) finished, but was deleted before its result could be read: a retention limit of orchd's (--retention-count, --retention-age) or an 'orchctl prune' took it")
        }
    }

    private static func noResult(_ id: JobID) -> CommandFailure {
        CommandFailure("orchd answered the wait for job \(id) without its result")
    }

    // MARK: - Batch

    /// `--batch FILE`: parses every line first, then sends the specs in chunks over one
    /// connection, printing the IDs of each chunk as it is stored.
    private static func runBatch(_ path: String, _ options: Options, _ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let template = try defaults(options, trailing: invocation.trailing, context: context, command: .shell("true"))
        let text = try BatchFile.read(path)
        let numbered: [(line: Int, spec: JobSpec)]
        do {
            numbered = try BatchFile.parseNumbered(text, defaults: template)
        } catch {
            throw CommandFailure(error.description, exitCode: .usage)
        }
        let specs = numbered.map(\.spec)
        guard !specs.isEmpty else { return .success }
        var connection = try context.connect(invocation)
        let reconnection = try Reconnection(context: context, invocation: invocation, timeout: options.reconnectTimeout)
        let json = invocation.global.json
        var submitted: [Job] = []
        var submittedCount = 0
        let (shared, trimmed) = Self.sharingEnvironment(specs)
        do {
            // The shared environment goes once in each call that has a spec using it.
            for chunk in BatchSplitter.chunks(trimmed, sharedEnvironment: shared) {
                // The job objects only when they are printed: IDs are much cheaper to send.
                let reply: JobsInterface.SubmitBatchReply
                let parameters = JobsInterface.SubmitBatchParameters(
                    specs: Array(trimmed[chunk]), environment: BatchSplitter.usesShared(trimmed[chunk]) ? shared : nil,
                    returnJobs: json ? true : nil)
                do {
                    // Each call stores all of its chunk or none: one refused while orchd
                    // stops is sent again to the next orchd.
                    reply = try reconnection.runRefusedWhileStopping(on: &connection) { (connection) throws(CommandFailure) in
                        try connection.call(JobsInterface.submitBatch, parameters)
                    }
                } catch {
                    throw Self.namingLine(error, specs: numbered[chunk], defaultQueue: template.queue)
                }
                if !json {
                    context.console.write(reply.ids.map { $0.description + "\n" }.joined())
                }
                submitted += reply.jobs ?? []
                submittedCount += reply.ids.count
            }
        } catch {
            // Earlier chunks are stored: say which jobs exist before reporting the failure.
            if json, !submitted.isEmpty { context.console.write(try JSONOutput.text(submitted)) }
            // orchd refused the call (all of its jobs are stored or none), or the connection
            // broke (the call may have been stored before it did).
            let refused = (error as? CommandFailure)?.remoteErrorName != nil
            let outcome: String?
            if submittedCount > 0 {
                // Chunks follow the file's order: the stored jobs are its first lines.
                let lastLine = numbered[submittedCount - 1].line
                let rest = refused ? "the error is about the rest, and none of them was" : "whether the rest were is unknown (the connection broke before orchd answered)"
                outcome = "Note: \(submittedCount) of \(specs.count) jobs were submitted before the error, up to line \(lastLine); \(rest)."
            } else {
                outcome = refused ? "Nothing was submitted." : nil
            }
            // After the error, as a batch file's own errors are followed by it.
            guard let outcome, var failure = error as? CommandFailure else { throw error }
            failure.message += "\n" + outcome
            throw failure
        }
        if json { context.console.write(try JSONOutput.text(submitted)) }
        return .success
    }

    /// `failure` with the batch line it is about when orchd refused a spec for depending on a
    /// job that does not exist, or that is another user's: orchd's error names the ID, not the
    /// spec, so the first line of the chunk that depends on that ID is the one it met first.
    /// So is a queue orchd does not know: the first line naming it, unless it is the queue
    /// every line gets by default (`--queue`), which no line is to blame for.
    static func namingLine(
        _ failure: CommandFailure, specs: ArraySlice<(line: Int, spec: JobSpec)>, defaultQueue: QueueName
    ) -> CommandFailure {
        let line: Int?
        if failure.remoteErrorName == JobsInterface.Errors.unknownQueue, let name = failure.remoteName {
            line = name == defaultQueue.rawValue ? nil : specs.first(where: { $0.spec.queue.rawValue == name })?.line
        } else if failure.remoteErrorName == JobsInterface.Errors.invalidJobSpec, failure.message.hasSuffix(" to depend on"),
                  let word = failure.message.split(separator: " ").dropLast(3).last, let id = Int64(word) {
            line = specs.first(where: { $0.spec.after.contains { $0.rawValue == id } })?.line
        } else if failure.remoteErrorName == JobsInterface.Errors.permissionDenied, failure.message.hasSuffix(" belongs to another user"),
                  let word = failure.message.split(separator: " ").dropFirst().first, let id = Int64(word) {
            // Named in a line's `after`: another user's job.
            line = specs.first(where: { $0.spec.after.contains { $0.rawValue == id } })?.line
        } else {
            line = nil
        }
        guard let line else { return failure }
        var named = failure
        named.message = "line \(line): \(failure.message)"
        return named
    }

    /// The environment the batch's specs share, sent once per SubmitBatch call, and the specs
    /// without it (decoding thousands of copies was most of a batch's cost in orchd).
    /// Nothing is shared when a line asks for an empty environment: SubmitBatch gives the
    /// shared one to every spec whose own is empty. Specs share it only when their
    /// environment is the same byte for byte.
    static func sharingEnvironment(_ specs: [JobSpec]) -> (shared: [String: String]?, specs: [JobSpec]) {
        guard let shared = specs.first?.environment, !shared.isEmpty,
              !specs.contains(where: { $0.environment.isEmpty }) else { return (nil, specs) }
        let trimmed = specs.map { spec -> JobSpec in
            var spec = spec
            if JobSpec.environmentsHaveSameBytes(spec.environment, shared) { spec.environment = [:] }
            return spec
        }
        return (shared, trimmed)
    }

    // MARK: - Building the spec

    /// Builds the job spec from the command line and the caller's environment and directory.
    /// - Parameters:
    ///   - now: the current time, for `--delay` and `--at`.
    ///   - zone: the time zone `--at HH:MM` is read in.
    /// - Throws: ``CommandLineError`` when the command is missing or given twice, options
    ///   conflict, or `--cwd` is not a directory.
    static func makeSpec(
        _ options: Options, trailing: [String]?, context: CommandContext, now: Date = Date(), zone: LocalTimeZone = .system
    ) throws(CommandLineError) -> JobSpec {
        let command: JobCommand
        switch (options.shell, trailing) {
        case (let shell?, nil):
            guard !shell.isEmpty else {
                throw CommandLineError(.invalidValue, "invalid value for option '--shell': the command is empty", command: spec.name)
            }
            command = .shell(shell)
        case (nil, let argv?) where !argv.isEmpty:
            guard !argv[0].isEmpty else {
                throw CommandLineError(.invalidValue, "the command after '--' is empty", command: spec.name)
            }
            command = .argv(argv)
        case (_?, _?):
            throw CommandLineError(.conflictingOptions, "give either --shell or a command after '--', not both", command: spec.name)
        default:
            throw CommandLineError(.missingArgument, "no command to run: give --shell <string>, -- <argv> ... or --batch <file>", command: spec.name)
        }
        let jobSpec = try defaults(options, trailing: trailing, context: context, command: command, now: now, zone: zone)
        do {
            try jobSpec.validate()
        } catch {
            throw CommandLineError(.invalidValue, error.message, command: spec.name)
        }
        if let bytes = BatchSplitter.oversizedBytes(jobSpec) {
            throw CommandLineError(.invalidValue, BatchSplitter.oversizedMessage(bytes), command: spec.name)
        }
        return jobSpec
    }

    /// The spec every option but the command describes, with `command` in it; for `--batch`,
    /// the defaults of every line. Not validated.
    /// - Throws: ``CommandLineError`` for conflicting options or a bad `--cwd`.
    static func defaults(
        _ options: Options, trailing: [String]?, context: CommandContext, command: JobCommand, now: Date = Date(),
        zone: LocalTimeZone = .system
    ) throws(CommandLineError) -> JobSpec {
        if options.batch != nil {
            if options.shell != nil || trailing != nil {
                throw CommandLineError(.conflictingOptions, "--batch takes the commands from the file; give no --shell or '--'", command: spec.name)
            }
            for (option, given) in [("unique", options.unique != nil), ("reuse", options.reuse), ("wait", options.wait)] where given {
                let hint = option == "wait" ? "; use 'orchctl wait' with the printed IDs" : ""
                throw CommandLineError(.conflictingOptions, "--\(option) cannot be used with --batch\(hint)", command: spec.name)
            }
        }
        if options.reuse && options.unique == nil {
            throw CommandLineError(.conflictingOptions, "--reuse needs --unique <key>", command: spec.name)
        }
        let notBefore: Date?
        switch (options.delayUSec, options.at) {
        case (_?, _?):
            throw CommandLineError(.conflictingOptions, "give either --delay or --at, not both", command: spec.name)
        case (let delay?, nil):
            notBefore = now.addingTimeInterval(Duration(microseconds: delay).timeInterval)
        case (nil, let start?):
            notBefore = try start.resolveStart(now: now, zone: zone, command: spec.name, startNow: "leave --at out to start the job now")
        case (nil, nil):
            notBefore = nil
        }
        if let timeout = options.timeoutUSec, timeout <= 0 {
            throw CommandLineError(.invalidValue, "invalid value for option '--timeout': it must be longer than zero", command: spec.name)
        }

        let cwd = try workingDirectory(options.cwd, current: context.currentDirectory)
        for name in options.environment.keys where !JSONByteReader.isStreamSafe(name) {
            throw CommandLineError(
                .invalidValue,
                "invalid value for option '--env': the name '\(name)' has more than \(JSONByteReader.maximumNonStarters) combining marks in a row",
                command: spec.name)
        }
        var environment = context.environment
        environment.merge(options.environment) { _, new in new }
        return JobSpec(
            command: command,
            cwd: cwd,
            environment: environment,
            queue: options.queue,
            priority: options.priority,
            // An empty name is none, as `edit --name ''` removes one.
            name: options.name?.isEmpty == true ? nil : options.name,
            labels: options.labels,
            after: options.after,
            notBefore: notBefore,
            timeoutUSec: options.timeoutUSec,
            maxAttempts: options.retries + 1,
            uniqueKey: options.unique)
    }

    /// `--cwd` made absolute against the current directory and checked to be a directory,
    /// or the current directory itself.
    private static func workingDirectory(_ option: String?, current: String?) throws(CommandLineError) -> String {
        guard let option else {
            guard let current else {
                throw CommandLineError(.invalidValue, "cannot read the current directory, or its path is not valid UTF-8; give --cwd <dir>", command: spec.name)
            }
            return current
        }
        guard !option.isEmpty else {
            throw CommandLineError(.invalidValue, "invalid value for option '--cwd': an empty path; leave --cwd out for the current directory", command: spec.name)
        }
        var path = option
        if !path.hasPrefix("/") {
            guard let current else {
                throw CommandLineError(.invalidValue, "cannot read the current directory (or its path is not valid UTF-8) to resolve --cwd '\(option)'; give an absolute path", command: spec.name)
            }
            path = current + "/" + path
        }
        path = normalized(path)
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw CommandLineError(.invalidValue, "invalid value for option '--cwd': \(path): \(reason)", command: spec.name)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandLineError(.invalidValue, "invalid value for option '--cwd': \(path) is not a directory", command: spec.name)
        }
        return path
    }

    /// `path` without `.`, `..` and repeated slashes, resolved lexically (as `cd -L` does), so
    /// the job's recorded directory reads as the user meant it.
    static func normalized(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }
}
