import OrchestratorAPI

/// A job recorded as running, with the identity of its process, so recovery at start can
/// tell whether that process still exists (the pid alone may have been reused).
public struct RunningJobRecord: Sendable, Hashable {
    /// The job; its ``Job/pid`` is the process (and process group) ID it ran as.
    public var job: Job
    /// The process's start time in clock ticks after boot (`/proc/PID/stat` field 22, proc(5)),
    /// as recorded at start; `nil` when unknown.
    public var processStartTicks: UInt64?
    /// The boot the process was started in (`/proc/sys/kernel/random/boot_id`); `nil` when unknown.
    public var bootID: String?
    /// The attempt's Slurm job ID as stored: `nil` when it runs on this machine, `""` when it
    /// was being submitted to Slurm (sbatch may or may not have run), else the ID.
    public var slurmJobID: String?

    /// Creates a record.
    public init(job: Job, processStartTicks: UInt64?, bootID: String?, slurmJobID: String? = nil) {
        self.slurmJobID = slurmJobID
        self.job = job
        self.processStartTicks = processStartTicks
        self.bootID = bootID
    }
}
