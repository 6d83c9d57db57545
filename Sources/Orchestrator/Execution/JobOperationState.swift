/// The mutable state of one ``JobOperation``, guarded by its mutex.
struct JobOperationState {
    /// `Operation.isExecuting`.
    var isExecuting = false
    /// `Operation.isFinished`.
    var isFinished = false
    /// The first stop request, if any.
    var stopReason: StopReason?
    /// The running process, once spawned.
    var process: LaunchedProcess?
    /// The main process's status, once reaped.
    var mainExit: TerminationStatus?
    /// The teardown in progress, if a stop reached a running process.
    var teardown: TeardownRun?
    /// Whether the teardown has finished (group gone, or last step run).
    var teardownDone = false
    /// Whether the job's cgroup was seen empty (`populated 0`); meaningless without one.
    var cgroupEmpty = false
    /// Whether `onFinished` has been enqueued (the once-guard).
    var reported = false
}
