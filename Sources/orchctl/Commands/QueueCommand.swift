import OrchestratorAPI

/// `orchctl queue`: the group of commands that change one queue (`queue set`).
enum QueueCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "queue",
        abstract: "Change a queue's settings.",
        discussion: """
            'queue set' changes a queue's concurrency, retry backoff and hooks.

            \(QueueSetCommand.hookHelp)
            """,
        usage: "queue <subcommand>",
        arguments: [],
        options: [],
        subcommands: [QueueSetCommand.spec])

    /// Never reached: the parser refuses a group without its subcommand.
    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        throw CommandLineError(.missingCommand, "missing subcommand of 'queue'", command: spec.name)
    }
}

/// `orchctl queue set Q [--concurrency N] [--retry-base SPAN] [--retry-cap SPAN] [--on EVENT=COMMAND]...`.
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

    static let spec = CommandSpec(
        name: "queue set",
        abstract: "Change a queue's concurrency, retry backoff, hooks and executor.",
        discussion: """
            Settings not given keep their value; a queue not seen before is created. A new concurrency applies at once: more jobs start, or none starts until enough have finished. No running job is stopped. Prints the queue's new settings.

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
        var executor: String?
        var slurmPartition: String?
        var slurmOptions: [String] = []

        static let bindings: [OptionBinding<Options>] = [
            .value(\.concurrency, "concurrency", "n", kind: .integerIn(1...10_000), help: "Run at most this many of the queue's jobs at once (1-10000)."),
            .value(\.retryBaseUSec, "retry-base", "span", kind: .timeSpan, help: "Wait this long before a failed job's first retry, doubling for each further one, e.g. 10s."),
            .value(\.retryCapUSec, "retry-cap", "span", kind: .timeSpan, help: "Never wait longer than this between retries, e.g. 10min; at least the retry base."),
            .keyValues(\.hooks, "on", "event=command", kind: .keyedValue(keys: hookEvents),
                       help: "Run COMMAND with /bin/sh -c when a job of the queue has EVENT; an empty COMMAND removes the hook."),
            .value(\.executor, "executor", "name", kind: .choice(QueuesInterface.executors),
                   help: "Where the queue's jobs run from now on: local (this machine, the default) or slurm (submitted with sbatch)."),
            .value(\.slurmPartition, "slurm-partition", "partition",
                   help: "Submit the queue's Slurm jobs to this partition; '' for Slurm's default."),
            .values(\.slurmOptions, "slurm-option", "option",
                    help: "Give sbatch this option for each job, e.g. --slurm-option=--mem=2G; repeat for more; replaces the queue's list, '' empties it."),
        ]
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let parameters = try makeParameters(invocation)
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
    /// - Throws: ``CommandLineError`` when no setting is given.
    static func makeParameters(_ invocation: Invocation) throws(CommandLineError) -> QueuesInterface.SetParameters {
        let options = Options(decoding: invocation)
        let parameters = QueuesInterface.SetParameters(
            name: QueueName(rawValue: invocation.arguments[0]) ?? .default,
            concurrency: options.concurrency, retryBaseUSec: options.retryBaseUSec, retryCapUSec: options.retryCapUSec,
            hooks: options.hooks.isEmpty ? nil : options.hooks, executor: options.executor,
            slurmPartition: options.slurmPartition,
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
        guard parameters.concurrency != nil || parameters.retryBaseUSec != nil || parameters.retryCapUSec != nil
            || parameters.hooks != nil || parameters.executor != nil || parameters.slurmPartition != nil || parameters.slurmOptions != nil
        else {
            throw CommandLineError(
                .missingArgument, "nothing to change: give --concurrency, --retry-base, --retry-cap, --on, --executor, --slurm-partition or --slurm-option",
                command: spec.name)
        }
        return parameters
    }
}
