import CommandLineParsing
import OrchestratorAPI

/// `orchctl queue`: the group of commands that change one queue (`queue set`).
enum QueueCommand: OrchctlCommand {
    static let name = "queue"
    static let spec = CommandSpec(
        name: name,
        abstract: "Add, change or remove a queue.",
        discussion: """
            Queues are declared: 'queue add' adds one, 'queue set' changes a queue's concurrency, retry backoff, hooks and executor, 'queue remove' removes one that has no unfinished job. The configuration file declares queues too (queue.NAME = concurrency=4, retry-base=10s, executor=slurm), and the queue 'default' always exists. Submitting to a queue that does not exist is an error naming those that do.

            \(QueueSetCommand.hookHelp)
            """,
        usage: "queue <subcommand>",
        arguments: [],
        options: [],
        subcommands: [QueueAddCommand.spec, QueueSetCommand.spec, QueueRemoveCommand.spec])

    /// Never reached: the parser refuses a group without its subcommand.
    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        throw CommandLineError(.missingCommand, "missing subcommand of 'queue'", command: spec.name)
    }
}

/// `orchctl queue set Q [--concurrency N] [--retry-base SPAN] [--retry-cap SPAN] [--on EVENT=COMMAND]...
/// [--max-running-per-user N] [--executor local|slurm] [--slurm-partition P] [--slurm-option OPTION]...`.
enum QueueSetCommand: OrchctlCommand {
    /// The event kinds a hook may be set for, sorted, as help and messages list them.
    static let hookEvents = QueuesInterface.hookEvents.sorted()

    /// What hooks are, which job results fire which hook event (``HookEvent``), and what a
    /// hook's environment holds; shown by `help queue` and `help queue set`.
    static let hookHelp = """
        A hook is a command orchd runs with /bin/sh -c when a job of the queue has one of these events:
        \(HookEvent.helpLines.joined(separator: "\n"))

        A hook gets the event's fields in its environment: ORCHD_EVENT (the hook's event), ORCHD_JOB_ID, ORCHD_QUEUE, ORCHD_RESULT (the job's result, e.g. timed_out), ORCHD_EXIT_CODE (only when the process exited: succeeded or failed), ORCHD_SIGNAL (only when signaled), ORCHD_ATTEMPT, ORCHD_JOB_NAME, ORCHD_COMMAND. Hooks run outside the scheduler, so a slow one delays no job, and one still running after 60s is stopped. '--on EVENT=' with nothing after the '=' removes that hook. A hook command has at most 4096 bytes. For example:

        orchctl queue set builds --on failed='logger "job $ORCHD_JOB_ID $ORCHD_RESULT"'
        """

    static let name = "queue set"
    static let spec = CommandSpec(
        name: name,
        abstract: "Change a queue's concurrency, retry backoff, hooks and executor.",
        discussion: """
            Settings not given keep their value; the queue must exist ('queue add' adds one). A new concurrency applies at once: more jobs start, or none starts until enough have finished. No running job is stopped. Prints the queue's new settings. Only root and members of orchd's admin group may change queues.

            With --executor slurm the queue's jobs are submitted to a Slurm cluster with sbatch: each runs its command exactly, in its directory, with its environment, its output in orchd's log files; the queue's concurrency is how many orchd has in Slurm at once. See README, "Running on a Slurm cluster".

            \(hookHelp)
            """,
        usage: "queue set <queue> [<options>]",
        arguments: [ArgumentSpec(name: "queue", kind: .queueName, arity: .one, help: "The queue to change.")],
        options: Options.specs)

    /// `queue set`'s options.
    struct Options: CommandOptions {
        var concurrency: Int?
        var retryBaseUSec: Int64?
        var retryCapUSec: Int64?
        var hooks: [String: String] = [:]
        var maxRunningPerUser: Int?
        var executor: String?
        var slurmPartition: String?
        var slurmOptions: [String] = []

        static let bindings: [OptionBinding<Options>] = [
            .value(\.concurrency, "concurrency", "n", kind: .integerIn(1...10_000), help: "Run at most this many of the queue's jobs at once (1-10000)."),
            .value(\.retryBaseUSec, "retry-base", "span", kind: .timeSpan, help: "Wait this long before a failed job's first retry, doubling for each further one, e.g. 10s."),
            .value(\.retryCapUSec, "retry-cap", "span", kind: .timeSpan, help: "Never wait longer than this between retries, e.g. 10min; at least the retry base."),
            .keyValues(\.hooks, "on", "event=command", kind: .keyedValue(keys: hookEvents),
                       help: "Run COMMAND with /bin/sh -c when a job of the queue has EVENT; an empty COMMAND removes the hook."),
            .value(\.maxRunningPerUser, "max-running-per-user", "n", kind: .integerIn(0...10_000),
                   help: "Let no user run more than N of the queue's jobs at once; 0 removes the limit. Free slots go to the users with queued jobs in turn either way."),
            .value(\.executor, "executor", "name", kind: .choice(QueuesInterface.executors),
                   help: "Where the queue's jobs run from now on: local (this machine, the default) or slurm (submitted with sbatch)."),
            .value(\.slurmPartition, "slurm-partition", "partition",
                   help: "Submit the queue's Slurm jobs to this partition; '' for Slurm's default."),
            .values(\.slurmOptions, "slurm-option", "option",
                    help: "Give sbatch this option for each job, e.g. --slurm-option --mem=2G; repeat for more; replaces the queue's list, '' empties it.")
                .takingOptionLikeValue(),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let parameters = try makeParameters(invocation, requireSetting: true)
        let connection = try context.connect(invocation)
        let queue = try connection.call(QueuesInterface.set, parameters).queue
        if invocation.global.json {
            context.console.write(try JSONOutput.text(queue))
        } else {
            context.console.write(QueueText.settings(queue))
        }
        return .success
    }

    /// The `Set` call's parameters: `hooks` is `nil` unless `--on` was given, and holds an
    /// empty command for each hook to remove.
    /// - Throws: ``CommandLineError`` when no setting is given (and one is required).
    static func makeParameters(_ invocation: Invocation, requireSetting: Bool = true) throws(CommandLineError) -> QueuesInterface.SetParameters {
        let options = Options(decoding: invocation)
        let parameters = QueuesInterface.SetParameters(
            name: QueueName(rawValue: invocation.arguments[0]) ?? .default,
            concurrency: options.concurrency, retryBaseUSec: options.retryBaseUSec, retryCapUSec: options.retryCapUSec,
            hooks: options.hooks.isEmpty ? nil : options.hooks, maxRunningPerUser: options.maxRunningPerUser,
            executor: options.executor, slurmPartition: options.slurmPartition,
            slurmOptions: options.slurmOptions.isEmpty ? nil : options.slurmOptions.filter { !$0.isEmpty })
        if let problem = QueuesInterface.hookProblem(parameters.hooks) {
            throw CommandLineError(.invalidValue, "invalid value for option '--on': \(problem)", command: spec.name)
        }
        if let problem = QueuesInterface.retryProblem(baseUSec: parameters.retryBaseUSec, capUSec: parameters.retryCapUSec) {
            throw CommandLineError(.conflictingOptions, problem, command: spec.name)
        }
        if let problem = QueuesInterface.slurmProblem(partition: parameters.slurmPartition, options: parameters.slurmOptions) {
            throw CommandLineError(.invalidValue, "invalid Slurm setting: \(problem)", command: spec.name)
        }
        guard !requireSetting || parameters.concurrency != nil || parameters.retryBaseUSec != nil || parameters.retryCapUSec != nil
            || parameters.hooks != nil || parameters.maxRunningPerUser != nil || parameters.executor != nil
            || parameters.slurmPartition != nil || parameters.slurmOptions != nil
        else {
            throw CommandLineError(
                .missingArgument,
                "nothing to change: give --concurrency, --retry-base, --retry-cap, --on, --max-running-per-user, --executor, --slurm-partition or --slurm-option",
                command: spec.name)
        }
        return parameters
    }
}

/// `orchctl queue add Q [--concurrency N] [--retry-base SPAN] [--retry-cap SPAN] [--on EVENT=COMMAND]...`.
enum QueueAddCommand: OrchctlCommand {
    typealias Options = QueueSetCommand.Options

    static let name = "queue add"
    static let spec = CommandSpec(
        name: name,
        abstract: "Add a queue, with its settings.",
        discussion: "Jobs can be submitted to the new queue at once. Settings not given are orchd's defaults (its --concurrency, retry backoff 1s to 5min, no hooks); 'queue set' changes them later. A queue that exists already is an error. Prints the queue's settings.",
        usage: "queue add <queue> [<options>]",
        arguments: [ArgumentSpec(name: "queue", kind: .queueName, arity: .one, help: "The queue to add.")],
        options: Options.specs)

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let parameters: QueuesInterface.SetParameters
        do {
            parameters = try QueueSetCommand.makeParameters(invocation, requireSetting: false)
        } catch {
            throw CommandLineError(error.code, error.message, command: spec.name)
        }
        let connection = try context.connect(invocation)
        let queue = try connection.call(QueuesInterface.add, parameters).queue
        if invocation.global.json {
            context.console.write(try JSONOutput.text(queue))
        } else {
            context.console.write(QueueText.settings(queue))
        }
        return .success
    }
}

/// `orchctl queue remove Q`.
enum QueueRemoveCommand: OrchctlCommand {
    static let name = "queue remove"
    static let spec = CommandSpec(
        name: name,
        abstract: "Remove a queue that has no unfinished job.",
        discussion: "Its finished jobs stay (status, show, logs, retry once the queue is added again). Refused, and nothing changes, while the queue has a job that has not finished (cancel them with 'orchctl cancel --queue <queue>', or wait with 'orchctl wait --queue <queue> --drained'), and for the queue 'default', which always exists.",
        usage: "queue remove <queue>",
        arguments: [ArgumentSpec(name: "queue", kind: .queueName, arity: .one, help: "The queue to remove.")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let name = QueueName(rawValue: invocation.arguments[0]) ?? .default
        let connection = try context.connect(invocation)
        _ = try connection.call(QueuesInterface.remove, QueuesInterface.RemoveParameters(name: name))
        if invocation.global.json {
            context.console.write(try JSONOutput.text(Removed(removed: name)))
        } else {
            context.console.print("removed queue \(name)")
        }
        return .success
    }

    /// What `--json` prints: `{"removed": "NAME"}`.
    struct Removed: Encodable {
        var removed: QueueName
    }
}
