import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import OrchestratorAPI

/// `orchctl submit`: queues one job, capturing the caller's environment and directory.
enum SubmitCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "submit",
        abstract: "Queue a command as a job.",
        discussion: """
            The words after '--' are the job's argument vector, run exactly as given without a shell; --shell runs a string with /bin/sh -c instead. The job gets your environment and working directory. Prints the new job's ID alone, so 'id=$(orchctl submit -- make)' works.

            With --batch, every non-empty line of the file that does not start with '#' is one job: a line starting with '{' is a JSON job spec (fields argv or shell, cwd, environment, queue, priority, name, labels, after, notBefore, timeoutUSec, maxAttempts, uniqueKey), any other line a shell command line as with --shell. The other options are defaults for every line; a JSON line's fields replace them. Prints the new IDs one per line, in file order. Nothing is submitted when a line is bad. Up to 2,000 jobs (or 512 KiB) are stored in one transaction; a bigger file is sent in several, and if one fails, the jobs of the earlier ones stay queued and their IDs are printed.
            """,
        usage: "submit [<options>] (--shell <string> | -- <argv> ... | --batch <file>)",
        arguments: [ArgumentSpec(name: "argv", kind: .text, arity: .zeroOrMore,
                                 help: "The command and its arguments, after '--'; passed verbatim, options included.")],
        options: [
            .value("shell", "string", help: "Run this string with /bin/sh -c instead of an argument vector."),
            .value("batch", "file", help: "Submit one job per line of this file ('-' for standard input)."),
            .value("queue", "queue", kind: .queueName, help: "The queue to run the job in.", default: "default"),
            .value("priority", "n", kind: .integer, help: "Higher runs first; equal priorities run in submission order.", default: "0"),
            .value("after", "id", kind: .jobID, help: "Start only after this job has succeeded; if it does not, the job ends as dependency_failed.", repeatable: true),
            .value("delay", "span", kind: .timeSpan, help: "Start no sooner than this long from now, e.g. 30s, 5min, 2h."),
            .value("at", "time", kind: .startTime, help: "Start no sooner than this time: RFC 3339 (2026-12-01T08:00:00Z, offsets allowed) or HH:MM[:SS], the next such local time."),
            .value("timeout", "span", kind: .timeSpan, help: "Stop a run that takes longer than this; it ends as timed_out."),
            .value("retries", "n", kind: .integerIn(0...999), help: "Run a failed, signaled, timed-out or interrupted job again up to N times (0-999), with growing backoff.", default: "0"),
            .value("unique", "key", help: "Refuse the job while another job with this key has not finished."),
            .flag("reuse", help: "With --unique: when such a job exists, print its ID and exit 0 instead of failing."),
            .value("name", "name", help: "A name to show for the job."),
            .value("label", "key=value", kind: .keyValue, help: "A label to attach to the job.", repeatable: true),
            .value("cwd", "dir", help: "The directory the job starts in.", default: "the current directory"),
            .value("env", "key=value", kind: .keyValue, help: "Set a variable in the job's environment, over your own.", repeatable: true),
            .flag("wait", help: "Wait for the job to finish and exit with its status (128+SIGNAL when signaled)."),
        ],
        takesTrailingArguments: true)

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        if let batch = invocation.value("batch") {
            return try runBatch(batch, invocation, context: context)
        }
        let jobSpec = try makeSpec(invocation, context: context)
        let connection = try context.connect(invocation)
        let parameters = JobsInterface.SubmitParameters(spec: jobSpec, reuseExisting: invocation.flag("reuse") ? true : nil)
        let submitted = try connection.call(JobsInterface.submit, parameters).job
        guard invocation.flag("wait") else {
            if invocation.global.json {
                context.console.write(try JSONOutput.text(submitted))
            } else {
                context.console.print(submitted.id.description)
            }
            return .success
        }
        // The ID goes out first, so a caller sees which job it is waiting for.
        if !invocation.global.json { context.console.print(submitted.id.description) }
        let finished = try connection.call(JobsInterface.wait, JobsInterface.IDsParameters(ids: [submitted.id])).jobs
        guard let job = finished.first(where: { $0.id == submitted.id }), let result = job.state.result else {
            throw CommandFailure("orchd answered the wait for job \(submitted.id) without its result")
        }
        if invocation.global.json { context.console.write(try JSONOutput.text(job)) }
        if case .spawnFailed(let reason) = result {
            // Otherwise only `show` would tell why the exit status is 127.
            context.console.printError("Error: job \(job.id) could not start: \(reason)")
        }
        return ExitCode(result.shellExitStatus)
    }

    // MARK: - Batch

    /// `--batch FILE`: parses every line first, then sends the specs in chunks over one
    /// connection, printing the IDs of each chunk as it is stored.
    private static func runBatch(_ path: String, _ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let template = try defaults(invocation, context: context, command: .shell("true"))
        let text = try BatchFile.read(path)
        let specs: [JobSpec]
        do {
            specs = try BatchFile.parse(text, defaults: template)
        } catch {
            throw CommandFailure(error.description, exitCode: .usage)
        }
        guard !specs.isEmpty else { return .success }
        let connection = try context.connect(invocation)
        let json = invocation.global.json
        var submitted: [Job] = []
        var submittedCount = 0
        let (shared, trimmed) = Self.sharingEnvironment(specs)
        do {
            // Chunks are sized by the trimmed specs: the shared environment goes once per call.
            for chunk in BatchSplitter.chunks(trimmed) {
                // The job objects only when they are printed: IDs are much cheaper to send.
                let reply = try connection.call(
                    JobsInterface.submitBatch,
                    JobsInterface.SubmitBatchParameters(
                        specs: Array(trimmed[chunk]), environment: shared, returnJobs: json ? true : nil))
                if !json {
                    context.console.write(reply.ids.map { $0.description + "\n" }.joined())
                }
                submitted += reply.jobs ?? []
                submittedCount += reply.ids.count
            }
        } catch {
            // Earlier chunks are stored: say which jobs exist before reporting the failure.
            if json, !submitted.isEmpty { context.console.write(try JSONOutput.text(submitted)) }
            if submittedCount > 0 {
                context.console.printError("Note: \(submittedCount) of \(specs.count) jobs were submitted before the error.")
            }
            throw error
        }
        if json { context.console.write(try JSONOutput.text(submitted)) }
        return .success
    }

    /// The environment the batch's specs share, sent once per SubmitBatch call, and the specs
    /// without it (decoding thousands of copies was most of a batch's cost in orchd).
    static func sharingEnvironment(_ specs: [JobSpec]) -> (shared: [String: String]?, specs: [JobSpec]) {
        guard let shared = specs.first(where: { !$0.environment.isEmpty })?.environment else { return (nil, specs) }
        let trimmed = specs.map { spec -> JobSpec in
            var spec = spec
            if spec.environment == shared { spec.environment = [:] }
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
        _ invocation: Invocation, context: CommandContext, now: Date = Date(), zone: LocalTimeZone = .system
    ) throws(CommandLineError) -> JobSpec {
        let command: JobCommand
        switch (invocation.value("shell"), invocation.trailing) {
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
        let jobSpec = try defaults(invocation, context: context, command: command, now: now, zone: zone)
        do {
            try jobSpec.validate()
        } catch {
            throw CommandLineError(.invalidValue, error.message, command: spec.name)
        }
        return jobSpec
    }

    /// The spec every option but the command describes, with `command` in it; for `--batch`,
    /// the defaults of every line. Not validated.
    /// - Throws: ``CommandLineError`` for conflicting options or a bad `--cwd`.
    static func defaults(
        _ invocation: Invocation, context: CommandContext, command: JobCommand, now: Date = Date(), zone: LocalTimeZone = .system
    ) throws(CommandLineError) -> JobSpec {
        if invocation.value("batch") != nil {
            if invocation.value("shell") != nil || invocation.trailing != nil {
                throw CommandLineError(.conflictingOptions, "--batch takes the commands from the file; give no --shell or '--'", command: spec.name)
            }
            for option in ["unique", "reuse", "wait"] where invocation.value(option) != nil || invocation.flag(option) {
                let hint = option == "wait" ? "; use 'orchctl wait' with the printed IDs" : ""
                throw CommandLineError(.conflictingOptions, "--\(option) cannot be used with --batch\(hint)", command: spec.name)
            }
        }
        if invocation.flag("reuse") && invocation.value("unique") == nil {
            throw CommandLineError(.conflictingOptions, "--reuse needs --unique <key>", command: spec.name)
        }
        let notBefore: Date?
        switch (invocation.value("delay").flatMap(TimeSpan.microseconds), invocation.value("at").flatMap(StartTime.parse)) {
        case (_?, _?):
            throw CommandLineError(.conflictingOptions, "give either --delay or --at, not both", command: spec.name)
        case (let delay?, nil):
            notBefore = now.addingTimeInterval(Double(delay) / 1_000_000)
        case (nil, let start?):
            notBefore = start.resolve(now: now, zone: zone)
        case (nil, nil):
            notBefore = nil
        }
        let timeout = invocation.value("timeout").flatMap(TimeSpan.microseconds)
        if let timeout, timeout <= 0 {
            throw CommandLineError(.invalidValue, "invalid value for option '--timeout': it must be longer than zero", command: spec.name)
        }

        let cwd = try workingDirectory(invocation.value("cwd"), current: context.currentDirectory)
        var environment = context.environment
        environment.merge(invocation.keyValues("env")) { _, new in new }
        return JobSpec(
            command: command,
            cwd: cwd,
            environment: environment,
            queue: invocation.value("queue").flatMap(QueueName.init(rawValue:)) ?? .default,
            priority: invocation.integer("priority") ?? 0,
            name: invocation.value("name"),
            labels: invocation.keyValues("label"),
            after: (invocation.values["after"] ?? []).compactMap { JobID(parsing: $0) },
            notBefore: notBefore,
            timeoutUSec: timeout,
            maxAttempts: (invocation.integer("retries") ?? 0) + 1,
            uniqueKey: invocation.value("unique"))
    }

    /// `--cwd` made absolute against the current directory and checked to be a directory,
    /// or the current directory itself.
    private static func workingDirectory(_ option: String?, current: String?) throws(CommandLineError) -> String {
        guard let option else {
            guard let current else {
                throw CommandLineError(.invalidValue, "cannot read the current directory; give --cwd <dir>", command: spec.name)
            }
            return current
        }
        var path = option
        if !path.hasPrefix("/") {
            guard let current else {
                throw CommandLineError(.invalidValue, "cannot read the current directory to resolve --cwd '\(option)'; give an absolute path", command: spec.name)
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
