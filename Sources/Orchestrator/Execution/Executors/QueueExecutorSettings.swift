import OrchestratorAPI

/// Where a queue's jobs run, as stored with the queue (`queue set --executor`): on this
/// machine (the default), or submitted to Slurm with the queue's partition and sbatch options.
public struct QueueExecutorSettings: Hashable, Sendable {
    /// The executors there are.
    public enum Kind: String, Hashable, Sendable {
        /// Processes of this machine, contained in cgroups (``LocalExecutor``).
        case local
        /// Batch jobs of a Slurm cluster (``SlurmExecutor``).
        case slurm
    }

    /// The executor.
    public var kind: Kind
    /// `sbatch --partition`; `nil`: Slurm's default partition.
    public var slurmPartition: String?
    /// More `sbatch` options, one argument each, given before orchd's own.
    public var slurmOptions: [String]

    /// Creates a value with every field given.
    public init(kind: Kind = .local, slurmPartition: String? = nil, slurmOptions: [String] = []) {
        self.kind = kind
        self.slurmPartition = slurmPartition
        self.slurmOptions = slurmOptions
    }

    /// A change of these settings (`queue set`, the configuration file); `nil` fields keep
    /// their value.
    public struct Change: Hashable, Sendable {
        /// `local` or `slurm`.
        public var executor: String?
        /// The partition; empty removes it.
        public var slurmPartition: String?
        /// The options; replaces the list.
        public var slurmOptions: [String]?

        /// Creates a value with every field given.
        public init(executor: String? = nil, slurmPartition: String? = nil, slurmOptions: [String]? = nil) {
            self.executor = executor
            self.slurmPartition = slurmPartition
            self.slurmOptions = slurmOptions
        }

        /// Whether it changes nothing.
        public var isEmpty: Bool { executor == nil && slurmPartition == nil && slurmOptions == nil }

        /// Why the change is refused (an unknown executor, a bad partition or option), or `nil`.
        public var problem: String? {
            if let executor, Kind(rawValue: executor) == nil {
                return "no executor '\(executor.visible)'; one of \(QueuesInterface.executors.joined(separator: ", "))"
            }
            return QueuesInterface.slurmProblem(partition: slurmPartition, options: slurmOptions)
        }

        /// `settings` with this change applied (check ``problem`` first).
        public func applied(to settings: QueueExecutorSettings) -> QueueExecutorSettings {
            var result = settings
            if let executor, let kind = Kind(rawValue: executor) { result.kind = kind }
            if let slurmPartition { result.slurmPartition = slurmPartition.isEmpty ? nil : slurmPartition }
            if let slurmOptions { result.slurmOptions = slurmOptions }
            return result
        }
    }
}
