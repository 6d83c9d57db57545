/// The mutable state of one ``JobOperation``, guarded by its mutex.
struct JobOperationState {
    /// `Operation.isExecuting`.
    var isExecuting = false
    /// `Operation.isFinished`.
    var isFinished = false
    /// The first stop request, if any.
    var stopReason: StopReason?
    /// The signal that request sends first instead of the teardown's own (`cancel --signal`).
    var stopSignal: Int32?
    /// Whether the job's processes are stopped (``JobOperation/setFrozen(_:)``).
    var frozen = false
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
    /// Whether the job's cgroup was removed already (by the test for leftovers).
    var cgroupRemoved = false
    /// Whether the cgroup watcher was asked to tell when the cgroup empties (once a teardown
    /// begins).
    var cgroupWatched = false
    /// Whether `onFinished` has been enqueued (the once-guard).
    var reported = false
}
