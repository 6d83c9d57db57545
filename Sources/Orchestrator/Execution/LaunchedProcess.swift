/// A process ``ProcessLauncher`` started: its identity and the pidfd that watches it.
///
/// `pid`, ``processStartTicks`` and ``bootID`` together identify the process across a daemon
/// restart (a pid alone can be reused): recovery compares them with `/proc/PID/stat` and
/// `/proc/sys/kernel/random/boot_id`.
public struct LaunchedProcess: Hashable, Sendable {
    /// The process ID. The process leads its own session and process group, so this is also
    /// its process group ID.
    public var pid: Int32
    /// The process's start time in clock ticks since boot (`sysconf(_SC_CLK_TCK)` per
    /// second): field 22 (`starttime`) of `/proc/PID/stat`, see proc_pid_stat(5).
    public var processStartTicks: UInt64
    /// The kernel's boot ID when the process started (`/proc/sys/kernel/random/boot_id`,
    /// see random(4)), so a restart after a reboot knows the pid is not the same process.
    public var bootID: String
    /// A pidfd for the process (pidfd_open(2)). Owned by whoever watches the process:
    /// ``ChildReaper`` closes it once the process is reaped.
    public var pidfd: Int32
    /// The cgroup the process started in, or `nil` in process-group containment.
    public var cgroup: Cgroup?

    /// Creates a value; normally only ``ProcessLauncher`` does.
    /// - Parameters:
    ///   - pid: the process ID, also its process group ID.
    ///   - processStartTicks: start time in clock ticks since boot.
    ///   - bootID: the kernel boot ID.
    ///   - pidfd: an open pidfd for the process.
    ///   - cgroup: the cgroup it started in, if any.
    public init(pid: Int32, processStartTicks: UInt64, bootID: String, pidfd: Int32, cgroup: Cgroup? = nil) {
        self.cgroup = cgroup
        self.pid = pid
        self.processStartTicks = processStartTicks
        self.bootID = bootID
        self.pidfd = pidfd
    }

    /// The process group the process leads (pgid == pid: the child calls setsid(2)).
    public var processGroup: ProcessGroup { ProcessGroup(id: pid) }
}
