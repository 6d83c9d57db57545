import Dispatch
import Foundation
import OrchestratorAPI

/// Where a queue's jobs run: the seam between the scheduler and the machinery that runs an
/// attempt (docs/ARCHITECTURE.md, Execution).
///
/// The scheduler claims a job, hands its attempt to its queue's executor, and hears back
/// through two callbacks; it never learns where the job runs. ``LocalExecutor`` runs
/// processes on this machine (``JobOperation``); ``SlurmExecutor`` submits batch jobs to a
/// Slurm cluster. Callbacks arrive on the control queue, `onStarted` at most once, then
/// `onEnd` exactly once.
protocol JobExecutor: AnyObject {
    /// Records in the store what recovery needs should orchd die while the attempt starts,
    /// before ``launch(_:onStarted:onEnd:)`` (the Slurm executor: "submitting").
    /// - Throws: the store's error; the attempt is then not launched.
    func prepare(_ job: Job, in store: JobStore) throws

    /// Starts one attempt of a claimed job.
    /// - Parameters:
    ///   - launch: what to run, for which job and attempt.
    ///   - onStarted: the attempt started (a process, or a Slurm job ID), or could not be
    ///     started; not called when it was stopped before starting.
    ///   - onEnd: how the attempt ended, exactly once.
    /// - Returns: the attempt, to stop it.
    func launch(
        _ launch: ExecutorLaunch,
        onStarted: @escaping @Sendable (Result<ExecutorStart, LaunchError>) -> Void,
        onEnd: @escaping @Sendable (ExecutorEnd) -> Void
    ) -> any ExecutorAttempt

    /// Whether new attempts may be launched now; `false` while the executor waits for its
    /// backend to answer again (Slurm unreachable). The executor calls
    /// ``availabilityChanged`` when that changes.
    var isAvailable: Bool { get }

    /// Called on the control queue when ``isAvailable`` becomes true again.
    var availabilityChanged: (@Sendable () -> Void)? { get set }
}

/// One attempt in flight, as an executor runs it.
protocol ExecutorAttempt: AnyObject, Sendable {
    /// Stops the attempt; its end comes through `onEnd`, with the reason's result
    /// (``StopReason/jobResult``), or `.detached` for a shutdown of an attempt that outlives
    /// the daemon.
    /// - Parameter signal: the first signal sent instead of SIGTERM (`cancel --signal`);
    ///   SIGKILL follows after the teardown grace. `nil`: the executor's usual stop.
    func stop(reason: StopReason, signal: Int32?)

    /// Whether the attempt goes on by itself when orchd stops (a Slurm job): a shutdown then
    /// detaches from it at once, and the next start re-attaches, instead of tearing it down.
    var outlivesDaemon: Bool { get }

    /// Suspends (`true`) or continues (`false`) the attempt's processes (`orchctl suspend`,
    /// `continue`): locally the cgroup freezer, on Slurm `scontrol suspend|resume`.
    /// - Parameter completion: called once, with `nil` when done, else why it could not be;
    ///   on any queue.
    func setSuspended(_ suspended: Bool, completion: @escaping @Sendable (String?) -> Void)
}

/// What an executor runs for one attempt.
struct ExecutorLaunch: Sendable {
    /// The claimed job (state running, its attempt number already counted).
    var job: Job
    /// The argument vector, working directory, environment and log files. Its `cgroup` is the
    /// local executor's to fill in.
    var request: LaunchRequest
    /// The queue's OperationQueue, whose width is the queue's concurrency.
    var operationQueue: OperationQueue
    /// The time between SIGTERM and SIGKILL when the attempt is torn down.
    var teardownGrace: Duration
    /// Told the attempt's result when it is known before the attempt ends (its main process
    /// exited, and processes it left are being torn down); called on the control queue.
    var onResultKnown: (@Sendable (JobResult) -> Void)? = nil
}

/// How an attempt started.
enum ExecutorStart: Sendable {
    /// A process of this machine.
    case process(LaunchedProcess)
    /// A Slurm batch job, by its Slurm job ID.
    case slurmJob(String)
}

/// How an attempt ended, as the executor reports it.
enum ExecutorEnd: Hashable, Sendable {
    /// It ended with this result (a stop reason's, when it was stopped), at `at` when the
    /// executor knows the time better than the moment it reports (a Slurm job that ended while
    /// orchd was down); `nil`: now.
    case finished(JobResult, at: Date? = nil)
    /// orchd stopped and the attempt goes on without it (``ExecutorAttempt/outlivesDaemon``):
    /// nothing is recorded; the next start re-attaches.
    case detached
    /// It never started and its backend could not be reached: the claim is given back, and
    /// the job is launched again once the executor is available.
    case released(reason: String)
}

extension ExecutorAttempt {
    /// Stops the attempt the usual way (``stop(reason:signal:)`` without a signal).
    func stop(reason: StopReason) { stop(reason: reason, signal: nil) }
}

extension JobOperation: ExecutorAttempt {
    /// A local process dies with the daemon's teardown.
    var outlivesDaemon: Bool { false }

    /// Freezes or thaws the attempt's processes (``JobOperation/setFrozen(_:)``: the cgroup
    /// freezer, or SIGSTOP/SIGCONT to its process group); answers at once.
    func setSuspended(_ suspended: Bool, completion: @escaping @Sendable (String?) -> Void) {
        completion(setFrozen(suspended))
    }
}
