/// Parameter and reply types of the `io.orchd.Queues` interface (`io.orchd.Queues.varlink`).
public enum QueuesInterface {
    /// The name.
    public static let name = "io.orchd.Queues"

    /// The errors a change of stored state may meet: nothing was changed.
    private static let storage = [JobsInterface.Errors.storageFailure, JobsInterface.Errors.storageFull, JobsInterface.Errors.databaseLocked]

    /// `List(names) -> (queues)`.
    public static let list = VarlinkMethod<NamesParameters, QueuesReply>(
        "io.orchd.Queues.List", errors: storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: QueuesReply.read)
    /// `Set(name, concurrency, retryBaseUSec, retryCapUSec, hooks, maxRunningPerUser, executor, slurmPartition, slurmOptions) -> (queue)`.
    public static let set = VarlinkMethod<SetParameters, QueueReply>(
        "io.orchd.Queues.Set", errors: [Errors.invalidSetting, Errors.noSuchQueue] + storage,
        readReply: QueueReply.read)
    /// `Add(name, concurrency, retryBaseUSec, retryCapUSec, hooks, maxRunningPerUser, executor, slurmPartition, slurmOptions) -> (queue)`.
    public static let add = VarlinkMethod<SetParameters, QueueReply>(
        "io.orchd.Queues.Add", errors: [Errors.invalidSetting, Errors.queueExists] + storage,
        readReply: QueueReply.read)
    /// `Remove(name) -> ()`.
    public static let remove = VarlinkMethod<RemoveParameters, RemoveReply>(
        "io.orchd.Queues.Remove", errors: [Errors.noSuchQueue, Errors.queueNotRemovable] + storage)
    /// `WaitDrained(name) -> (queue)`.
    public static let waitDrained = VarlinkMethod<WaitDrainedParameters, QueueReply>(
        "io.orchd.Queues.WaitDrained", errors: [Errors.noSuchQueue] + storage,
        writeParameters: { $0.writeJSON(to: &$1) }, readReply: QueueReply.read)
    /// `Pause(names) -> (queues)`.
    public static let pause = VarlinkMethod<NamesParameters, QueuesReply>(
        "io.orchd.Queues.Pause", errors: [Errors.noSuchQueue] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: QueuesReply.read)
    /// `Resume(names) -> (queues)`.
    public static let resume = VarlinkMethod<NamesParameters, QueuesReply>(
        "io.orchd.Queues.Resume", errors: [Errors.noSuchQueue] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: QueuesReply.read)
    /// Every method of the interface.
    public static let methods = [list.erased, set.erased, waitDrained.erased, pause.erased, resume.erased, add.erased, remove.erased]

    /// The qualified names of the interface's errors.
    public enum Errors {
        public static let noSuchQueue = "io.orchd.Queues.NoSuchQueue"
        public static let invalidSetting = "io.orchd.Queues.InvalidSetting"
        public static let queueExists = "io.orchd.Queues.QueueExists"
        public static let queueNotRemovable = "io.orchd.Queues.QueueNotRemovable"
    }

    /// `Remove(name) -> ()`: removes a declared queue that has no unfinished job; its
    /// finished jobs stay. `default` cannot be removed.
    public struct RemoveParameters: Codable, Sendable {
        /// The queue.
        public var name: QueueName
        /// Creates a value with every field given.
        public init(name: QueueName) { self.name = name }
    }

    /// `Remove`'s empty reply.
    public struct RemoveReply: Codable, Sendable {
        /// Creates the value.
        public init() {}
    }

    /// `Set(name, concurrency, retryBaseUSec, retryCapUSec) -> (queue)`: change a declared
    /// queue's settings; fields not given keep their value. `Add` takes the same fields to
    /// declare a new queue.
    public struct SetParameters: Codable, Sendable {
        /// The name.
        public var name: QueueName
        /// Jobs run at once.
        public var concurrency: Int?
        /// Backoff before the first retry, in microseconds.
        public var retryBaseUSec: Int64?
        /// The longest backoff, in microseconds.
        public var retryCapUSec: Int64?
        /// Hook commands to set, by event kind (`finished`, `failed`, `succeeded`, `cancelled`,
        /// `retrying`, `started`, `queue_drained`); an empty command removes that hook.
        public var hooks: [String: String]?
        /// The most running jobs one user may have in the queue; 0 removes the limit.
        public var maxRunningPerUser: Int?
        /// Where the queue's jobs run from now on: `local` or `slurm` (``executors``).
        public var executor: String?
        /// The Slurm partition (`sbatch --partition`); an empty string removes it.
        public var slurmPartition: String?
        /// The `sbatch` options, each one argument (`--mem=2G`); replaces the stored list, an
        /// empty list removes them.
        public var slurmOptions: [String]?
        /// Creates a value with every field given.
        public init(
            name: QueueName, concurrency: Int? = nil, retryBaseUSec: Int64? = nil, retryCapUSec: Int64? = nil,
            hooks: [String: String]? = nil, maxRunningPerUser: Int? = nil, executor: String? = nil, slurmPartition: String? = nil,
            slurmOptions: [String]? = nil
        ) {
            self.maxRunningPerUser = maxRunningPerUser
            self.executor = executor
            self.slurmPartition = slurmPartition
            self.slurmOptions = slurmOptions
            self.name = name
            self.concurrency = concurrency
            self.retryBaseUSec = retryBaseUSec
            self.retryCapUSec = retryCapUSec
            self.hooks = hooks
        }
    }

    /// The most bytes of one hook command. A hook is a command line run with `/bin/sh -c`;
    /// longer scripts belong in a file the hook runs. The cap keeps a queue listing (every
    /// queue with all its hooks, in one reply) far below the reply cap.
    public static let maximumHookBytes = 4096

    /// Why `hooks` cannot be set, or `nil` when every command is within ``maximumHookBytes``
    /// and has no NUL byte (`/bin/sh -c` gets the command as a C string, which would end
    /// there: the rest would never run).
    public static func hookProblem(_ hooks: [String: String]?) -> String? {
        let sorted = (hooks ?? [:]).sorted { $0.key < $1.key }
        if let (event, _) = sorted.first(where: { $0.value.utf8.contains(0) }) {
            return "the \(event) hook's command contains a NUL byte"
        }
        guard let (event, command) = sorted.first(where: { $0.value.utf8.count > maximumHookBytes }) else { return nil }
        return "the \(event) hook's command is \(command.utf8.count) bytes; a hook command may have at most \(maximumHookBytes) "
            + "(put a longer script in a file and run that)"
    }

    /// Why a retry backoff is refused (a base or cap not longer than zero, or a cap shorter
    /// than the base), or `nil` when what is given is fine.
    public static func retryProblem(baseUSec: Int64?, capUSec: Int64?) -> String? {
        if let baseUSec, baseUSec <= 0 { return "the retry base must be longer than zero" }
        if let capUSec, capUSec <= 0 { return "the retry cap must be longer than zero" }
        // As a timeout: a backoff of centuries would put the next attempt past what a
        // timestamp can say (RFC 3339's four-digit years).
        let longest = JobSpec.maximumTimeoutUSec
        if let baseUSec, baseUSec > longest { return "the retry base must be at most 100 years" }
        if let capUSec, capUSec > longest { return "the retry cap must be at most 100 years" }
        guard let baseUSec, let capUSec, capUSec < baseUSec else { return nil }
        return "the retry cap (\(TimeSpan.format(Duration(microseconds: capUSec)))) is shorter than the retry base (\(TimeSpan.format(Duration(microseconds: baseUSec)))); "
            + "the cap is the longest wait between retries, so it must be at least the base"
    }

    /// `List(names)`, `Pause(names) -> (queues)` and `Resume(names) -> (queues)`; no names:
    /// every queue. List leaves out names no queue has.
    public struct NamesParameters: Codable, Sendable {
        /// The queues; `nil` for every queue.
        public var names: [QueueName]?
        /// Creates a value with every field given.
        public init(names: [QueueName]? = nil) { self.names = names }
    }

    /// `WaitDrained(name) -> (queue)`: replies once the queue has no waiting, queued or
    /// running job (at once when it has none).
    public struct WaitDrainedParameters: Codable, Sendable {
        /// The name.
        public var name: QueueName
        /// Creates a value with every field given.
        public init(name: QueueName) { self.name = name }
    }

    /// The executors a queue may have: where its jobs run.
    public static let executors = ["local", "slurm"]

    /// Why these Slurm settings are refused, or `nil` when they are fine: an option must be
    /// one `sbatch` option (starting with `-`), and none may be one orchd sets itself.
    public static func slurmProblem(partition: String?, options: [String]?) -> String? {
        if let partition, partition.contains(where: { $0.isWhitespace || $0 == "," || $0.isNewline }) {
            return "the partition '\(partition.visible)' is not a Slurm partition name (no spaces or commas)"
        }
        for option in options ?? [] {
            guard option.hasPrefix("-"), !option.contains("\n"), !option.contains("\0") else {
                return "'\(option.visible)' is not an sbatch option: give each as one argument starting with '-', e.g. --mem=2G"
            }
            if let name = reservedSlurmOption(in: option) {
                return "'\(name.visible)' is set by orchd for every job (job name, output, exit status, environment, directory, comment, user, requeue); leave it out"
            }
            if let name = matchingSlurmOption(in: option, among: slurmOptionsSubmittingNothing) {
                return "'\(name.visible)' makes sbatch submit no job; leave it out"
            }
            if let problem = missingSlurmOptionValue(in: option) { return problem }
        }
        return nil
    }

    /// Why `option` lacks the value sbatch would take from the next argument, or `nil`. Each
    /// queue option is one argument, and orchd's own options follow them: a `--mail-user`
    /// without `=` took `--job-name=orchd-ID` for its value, and the job, named otherwise,
    /// was lost to orchd and run again beside itself. A long option without `=` must be one
    /// that takes no value (sbatch(1), Slurm 22.05); a cluster of short ones must not end
    /// with one that takes a value.
    static func missingSlurmOptionValue(in option: String) -> String? {
        if option.hasPrefix("--") {
            guard !option.contains("=") else { return nil }
            let name = String(option.dropFirst(2))
            // getopt_long(3): an exact name, else any unambiguous prefix.
            if slurmLongOptionsWithoutValue.contains(name) { return nil }
            let matches = (slurmLongOptionsWithoutValue.union(slurmLongOptionsWithValue)).filter { $0.hasPrefix(name) }
            if !matches.isEmpty && matches.isSubset(of: slurmLongOptionsWithoutValue) { return nil }
            let shown = matches.count == 1 ? "--\(matches.first!)" : option
            return "'\(option.visible)' takes a value in sbatch, or is not an sbatch option orchd knows to take none: give the value in the same argument, \(shown.visible)=VALUE"
        }
        for (index, letter) in option.dropFirst().enumerated() where !slurmFlagsWithoutValue.contains(letter) {
            // A letter that takes a value ends the cluster: the rest is its value.
            guard index + 2 < option.count else {
                return "'-\(String(letter).visible)' takes a value in sbatch: attach it (-\(String(letter).visible)VALUE), or use its long form with '='"
            }
            return nil
        }
        return nil
    }

    /// sbatch's long options that take no value, or only an optional one given with `=`
    /// (sbatch(1), Slurm 22.05).
    static let slurmLongOptionsWithoutValue: Set<String> = [
        "contiguous", "exclusive", "get-user-env", "help", "hold", "ignore-pbs", "nice", "no-kill", "no-requeue",
        "overcommit", "oversubscribe", "parsable", "propagate", "quiet", "reboot", "requeue", "spread-job", "test-only",
        "usage", "use-min-nodes", "verbose", "version", "wait",
    ]

    /// sbatch's long options that take a value (sbatch(1), Slurm 22.05), for telling which one
    /// an abbreviation names.
    static let slurmLongOptionsWithValue: Set<String> = [
        "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster-constraint", "clusters",
        "comment", "constraint", "container", "core-spec", "cores-per-socket", "cpu-freq", "cpus-per-gpu", "cpus-per-task",
        "deadline", "delay-boot", "dependency", "distribution", "error", "exclude", "export", "export-file",
        "extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task",
        "gres", "gres-flags", "hint", "input", "job-name", "kill-on-invalid-dep", "licenses", "mail-type", "mail-user",
        "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nodefile", "nodelist",
        "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "open-mode",
        "output", "partition", "power", "prefer", "priority", "profile", "qos", "reservation", "signal",
        "sockets-per-node", "switches", "thread-spec", "threads-per-core", "time", "time-min", "tmp", "uid",
        "wait-all-nodes", "wckey", "wrap",
    ]

    /// The sbatch options with which it submits nothing: it prints help, usage or its
    /// version, or only tests the job (`--test-only`), and no job ID.
    static let slurmOptionsSubmittingNothing: Set<String> = ["--help", "-h", "--usage", "-u", "--version", "-V", "--test-only"]

    /// The option of `set` an argument gives sbatch, read as sbatch's getopt_long(3) reads it,
    /// or `nil`: a long option may be any unambiguous prefix of its name, a short one may carry
    /// its value attached (`-oF`) or follow flags that take none (`-vW`).
    /// - Returns: the option as given (its name part), when it is or may be one of `set`.
    static func matchingSlurmOption(in option: String, among set: Set<String>) -> String? {
        let name = option.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? option
        if name.hasPrefix("--") {
            return set.contains { $0.hasPrefix("--") && $0.hasPrefix(name) } ? name : nil
        }
        for letter in option.dropFirst() {
            if set.contains("-\(letter)") { return "-\(letter)" }
            guard slurmFlagsWithoutValue.contains(letter) else { return nil }
        }
        return nil
    }

    /// The reserved option an argument gives sbatch, read as sbatch's getopt_long(3) reads it,
    /// or `nil`: a long option may be any unambiguous prefix of its name (`--outp=F` is
    /// `--output=F`), a short one may carry its value attached (`-oF`) or follow flags that take
    /// none (`-vW`), and `--` ends the options, so orchd's own would become the script's.
    /// - Parameter option: one queue option, starting with `-`.
    /// - Returns: the option as given (its name part), when it is or may be a reserved one.
    static func reservedSlurmOption(in option: String) -> String? {
        let name = option.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? option
        if name == "--" || name == "-" { return name }
        return matchingSlurmOption(in: option, among: reservedSlurmOptions)
    }

    /// sbatch's short options that take no value (sbatch(1)): more letters may follow them.
    static let slurmFlagsWithoutValue: Set<Character> = ["h", "H", "I", "k", "O", "Q", "s", "u", "v", "V", "W"]

    /// The `sbatch` options orchd gives each job itself, refused in a queue's options.
    public static let reservedSlurmOptions: Set<String> = [
        "--job-name", "-J", "--output", "-o", "--error", "-e", "--export", "--export-file", "--chdir", "-D",
        "--parsable", "--wrap", "--array", "-a", "--wait", "-W", "--comment", "--uid", "--gid", "--input", "-i",
        "--requeue", "--no-requeue",
    ]

    /// The event kinds a hook may be set for.
    public static let hookEvents = Set(HookEvent.allCases.map(\.rawValue))

    /// A reply carrying one queue.
    public struct QueueReply: Codable, Sendable {
        /// The queue it is about.
        public var queue: QueueInfo
        /// Creates a value with every field given.
        public init(queue: QueueInfo) { self.queue = queue }

        /// Reads `{"queue": {...}}` as the `Decodable` conformance does (other members
        /// skipped), or gives up (`nil`) on anything else (``QueueInfo/read(_:)``).
        @Sendable public static func read(_ reader: inout JSONByteReader) -> QueueReply? {
            reader.member("queue", QueueInfo.read).map(QueueReply.init(queue:))
        }
    }

    /// A reply carrying several queues, by name.
    public struct QueuesReply: Codable, Sendable {
        /// The queues.
        public var queues: [QueueInfo]
        /// Creates a value with every field given.
        public init(queues: [QueueInfo]) { self.queues = queues }

        /// Reads `{"queues": [...]}` as the `Decodable` conformance does (other members
        /// skipped), or gives up (`nil`) on anything else (``QueueInfo/read(_:)``).
        @Sendable public static func read(_ reader: inout JSONByteReader) -> QueuesReply? {
            reader.member("queues") { $0.list(QueueInfo.read) }.map(QueuesReply.init(queues:))
        }
    }

    /// `NoSuchQueue(name)`: no queue of this name is declared.
    public static func noSuchQueue(_ name: QueueName) -> VarlinkError {
        VarlinkError(Errors.noSuchQueue, ["name": .string(name.rawValue), "message": .string("no queue named '\(name)' (add one with 'orchctl queue add \(name)')")])
    }

    /// `QueueExists(name, message)`: `Add` of a queue that is declared already.
    public static func queueExists(_ name: QueueName, message: String) -> VarlinkError {
        VarlinkError(Errors.queueExists, ["name": .string(name.rawValue), "message": .string(message)])
    }

    /// `QueueNotRemovable(name, message)`: the queue has unfinished jobs, or is `default`.
    public static func queueNotRemovable(_ name: QueueName, message: String) -> VarlinkError {
        VarlinkError(Errors.queueNotRemovable, ["name": .string(name.rawValue), "message": .string(message)])
    }

    /// `InvalidSetting(message)`: a value is out of range.
    public static func invalidSetting(_ message: String) -> VarlinkError {
        VarlinkError(Errors.invalidSetting, ["message": .string(message)])
    }
}
