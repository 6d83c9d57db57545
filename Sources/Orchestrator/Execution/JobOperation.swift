import Dispatch
import Foundation
import OrchestratorAPI
import Synchronization

/// An asynchronous `Operation` that runs one job process: it spawns in `start()` and
/// finishes when the main process has been reaped (docs/ARCHITECTURE.md, Patterns).
///
/// Put it on an `OperationQueue` whose `maxConcurrentOperationCount` is the queue's
/// concurrency. Callbacks arrive on `callbackQueue` (the control queue), in this order:
/// `onStarted` once if a spawn was attempted, then `onFinished` exactly once. The operation
/// becomes finished only after `onFinished` has been enqueued, so a queue-drained observer
/// never runs ahead of the last result.
///
/// The result is the main process's status (or the stop reason's), not end-of-file on its
/// output. But a job is over only when nothing of it runs: when the main process exits and
/// members are left behind (`setsid sleep 900 &`: its cgroup is still populated, or its
/// process group still has members), they are torn down with the same teardown as a stop, as
/// systemd's `KillMode=control-group` does at a unit's end, and `onFinished` waits for them.
/// In a cgroup that means `populated 0` in `cgroup.events` (``CgroupWatcher``); the emptied
/// cgroup is then removed. When the job is stopped, completion also waits for the teardown to
/// end, so a stopped job's result means its processes are down.
///
/// swift-corelibs-foundation facts this relies on: `isExecuting`/`isFinished` changes must be
/// announced with `willChangeValue`/`didChangeValue(forKey:)` (outside any lock) or the queue
/// never starts the next operation; `start()` is still called for an operation cancelled
/// while queued; `cancel()` only sets a flag, so ``stop(reason:)`` tears the group down itself.
public final class JobOperation: Operation, @unchecked Sendable { // safe: a subclass of Operation cannot be checked; all mutable state is in `state` (a Mutex), the rest is immutable and Sendable
    /// The job this operation runs.
    public let jobID: JobID
    private let request: LaunchRequest
    private let launcher: ProcessLauncher
    private let reaper: ChildReaper
    private let teardownPlan: Teardown
    private let containment: Containment?
    /// The hook run this operation is, whose processes the fallback finds by `ORCHD_HOOK_ID`
    /// rather than by the job's identity; `nil` for a job.
    private let hook: Int64?
    private let callbackQueue: DispatchQueue
    private let onStarted: @Sendable (Result<LaunchedProcess, LaunchError>) -> Void
    private let onFinished: @Sendable (JobResult, Date) -> Void
    private let onResultKnown: (@Sendable (JobResult) -> Void)?
    /// Serial queue for this job's reaping and teardown timers.
    private let eventQueue: DispatchQueue
    private let state = Mutex(JobOperationState())
    /// The process while it is being started, for a stop meanwhile to kill.
    private let spawning = SpawningChild()

    /// Creates an operation for one attempt of a job.
    /// - Parameters:
    ///   - jobID: the job.
    ///   - request: what to spawn.
    ///   - launcher: spawns the process.
    ///   - reaper: reaps it (shared by all jobs).
    ///   - teardown: how ``stop(reason:)`` stops a running process group.
    ///   - containment: the daemon's containment: its cgroup watcher, or the identity scan of
    ///     the process-group fallback; `nil` for the process group alone.
    ///   - hook: the number of the hook run this operation is (``ProcessIdentity``), or `nil`
    ///     for a job's attempt.
    ///   - callbackQueue: a serial queue for the callbacks, e.g. the control queue.
    ///   - onStarted: the spawn's outcome; not called when the operation is cancelled before
    ///     it starts.
    ///   - onFinished: the job's result, exactly once, after `onStarted`, and when the job
    ///     ended: the moment the operation knew it (reaped and torn down), taken before the hop
    ///     to `callbackQueue`, so that a busy queue does not make the recorded end late.
    ///   - onResultKnown: the result, when the main process exited and left processes that
    ///     must be torn down before `onFinished` (their grace can be long), so that it can be
    ///     stored meanwhile and a crash of orchd does not lose it.
    public init(
        jobID: JobID,
        request: LaunchRequest,
        launcher: ProcessLauncher,
        reaper: ChildReaper,
        teardown: Teardown,
        containment: Containment? = nil,
        hook: Int64? = nil,
        callbackQueue: DispatchQueue,
        onStarted: @escaping @Sendable (Result<LaunchedProcess, LaunchError>) -> Void,
        onFinished: @escaping @Sendable (JobResult, Date) -> Void,
        onResultKnown: (@Sendable (JobResult) -> Void)? = nil
    ) {
        self.jobID = jobID
        self.request = request
        self.launcher = launcher
        self.reaper = reaper
        self.teardownPlan = teardown
        self.containment = containment
        self.hook = hook
        self.callbackQueue = callbackQueue
        self.onStarted = onStarted
        self.onFinished = onFinished
        self.onResultKnown = onResultKnown
        self.eventQueue = DispatchQueue(label: hook.map { "orchd.hook.\($0)" } ?? "orchd.job.\(jobID.rawValue)")
        super.init()
    }

    // MARK: - Operation

    /// Always true: the operation finishes when its process is reaped, not when `start()`
    /// returns.
    public override var isAsynchronous: Bool { true }

    /// Whether the job's process has been started and not yet finished.
    public override var isExecuting: Bool { state.withLock { $0.isExecuting } }

    /// Whether the job has finished and `onFinished` has been enqueued.
    public override var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Spawns the process; called by the `OperationQueue` on one of its threads.
    ///
    /// When the operation was cancelled (or stopped) before it started, it spawns nothing and
    /// finishes with `.cancelled` (or the stop reason's result). A ``LaunchError`` is reported
    /// as `onStarted(.failure)` then `onFinished(.spawnFailed(reason:))`.
    public override func start() {
        let earlyStop = state.withLock { $0.stopReason }
        if isCancelled || earlyStop != nil {
            let result = (earlyStop ?? .cancelled).jobResult
            let endedAt = Date()
            callbackQueue.async { [onFinished] in onFinished(result, endedAt) }
            finish(wasExecuting: false)
            return
        }
        setExecuting()

        let process: LaunchedProcess
        do {
            process = try launcher.launch(request, spawning: spawning)
        } catch {
            let message = error.message
            let endedAt = Date()
            callbackQueue.async { [onStarted, onFinished] in
                onStarted(.failure(error))
                onFinished(.spawnFailed(reason: message), endedAt)
            }
            state.withLock { $0.reported = true }
            finish(wasExecuting: true)
            return
        }
        // Enqueued before the reaper can fire, so onStarted always precedes onFinished.
        callbackQueue.async { [onStarted] in onStarted(.success(process)) }

        // A stop that arrived while we were spawning is carried out now.
        let pendingStop = state.withLock { state -> Bool in
            state.process = process
            return state.stopReason != nil
        }
        // Nothing on the event queue waits for anything, so the loop's thread may enter it
        // and end a job there in one system call (endedAtOnce()). Only a job with a cgroup
        // can end so; without one the test for leftovers scans /proc, a turn of the queue.
        reaper.watch(process, on: eventQueue, entersQueueDirectly: process.cgroup != nil) { [self] status in
            mainProcessExited(status)
        }
        if process.cgroup != nil && containment?.watcher == nil {
            state.withLock { $0.cgroupEmpty = true }  // no watcher: nothing to wait for
        }
        if pendingStop { beginTeardown(of: process) }
    }

    /// Marks the operation cancelled; a running one is torn down with result `.cancelled`
    /// (same as `stop(reason: .cancelled)`).
    public override func cancel() {
        super.cancel()
        stop(reason: .cancelled)
    }

    // MARK: - Stopping

    /// Stops the job.
    ///
    /// Not yet started: the operation is cancelled and will finish without spawning. Running:
    /// the teardown runs against its process group, and the result becomes the reason's
    /// (``StopReason/jobResult``: `.cancelled`, `.timedOut`, `.interrupted`) however the
    /// process died. Already exited on its own, or already stopping: the result stays; with
    /// `signal`, the processes being torn down get it now (a second `cancel --signal KILL`
    /// ends a grace that a process ignoring SIGTERM would sit out, as it ends the grace of
    /// processes the main one left).
    /// - Parameters:
    ///   - reason: why the job is stopped.
    ///   - signal: the signal the teardown sends first instead of its own first one
    ///     (`cancel --signal INT`); `nil` for the teardown as planned.
    public func stop(reason: StopReason, signal: Int32? = nil) {
        enum Action { case none, cancelQueued, killSpawning, tearDown(LaunchedProcess), signalTeardown(TeardownRun, Int32) }
        let action = state.withLock { state -> Action in
            guard state.stopReason == nil, state.mainExit == nil, !state.isFinished else {
                guard let signal, !state.teardownDone, !state.reported, !state.isFinished else { return .none }
                if let run = state.teardown { return .signalTeardown(run, signal) }
                // No teardown has begun (the main process ended and one of what it left may be
                // about to, or a stop waits for the spawn): it sends this signal first.
                state.stopSignal = signal
                return .none
            }
            state.stopReason = reason
            state.stopSignal = signal
            if let process = state.process { return .tearDown(process) }
            // Not started: start() sees the reason. Spawning: the child, which has not exec'd
            // yet (or only just), is killed, so that its spawn returns even if its user
            // stopped it before its exec; start() then tears down what is left.
            return state.isExecuting ? .killSpawning : .cancelQueued
        }
        switch action {
        case .none: break
        case .cancelQueued: if !isCancelled { super.cancel() }
        case .killSpawning: spawning.kill()
        case .tearDown(let process): beginTeardown(of: process)
        case .signalTeardown(let run, let signal): eventQueue.async { run.assumeIsolated { $0.signalNow(signal) } }
        }
    }

    /// Starts the teardown of the job's processes: its cgroup, or its process group and (in
    /// process-group containment) every process carrying the job's identity.
    /// - Parameter process: the main process.
    private func beginTeardown(of process: LaunchedProcess) {
        let identity = process.cgroup == nil ? fallbackIdentity : nil
        let target = TeardownTarget(group: process.processGroup, cgroup: process.cgroup, identity: identity)
        let (signal, frozen) = state.withLock { state in
            defer { state.frozen = false }
            return (state.stopSignal, state.frozen)
        }
        // A suspended job is thawed first, so that it can act on SIGTERM (or the signal
        // asked for) within the grace period, as a running one would.
        if frozen { Self.freeze(process, false) }
        var plan = teardownPlan
        if let signal, let first = plan.steps.firstIndex(where: { if case .signal = $0 { true } else { false } }) {
            plan.steps[first] = .signal(signal)
        }
        let run = TeardownRun(teardown: plan, target: target, queue: eventQueue)
        state.withLock { $0.teardown = run }
        watchUntilEmpty(process)
        run.start { [self] in
            let done = state.withLock { state -> Bool in
                state.teardownDone = true
                return state.mainExit != nil
            }
            if done { report() }
        }
    }

    // MARK: - Suspending

    /// Stops (`true`) or continues (`false`) every process of the running job, as an
    /// executor's suspend and resume: in a cgroup its freezer (`cgroup.freeze`), so nothing
    /// it forks escapes; in the process-group fallback SIGSTOP and SIGCONT to its process
    /// group (a process that left the group is not stopped). A teardown thaws the job
    /// first (``stop(reason:signal:)``).
    /// - Returns: `nil` when done (or already so), else why not: the job has no running
    ///   process, is being stopped, or the kernel refused.
    public func setFrozen(_ frozen: Bool) -> String? {
        let process = state.withLock { state -> LaunchedProcess? in
            guard let process = state.process, state.mainExit == nil, state.stopReason == nil else { return nil }
            return process
        }
        guard let process else { return "the job's process is not running (it is starting, ending or being stopped)" }
        if let code = Self.freeze(process, frozen) { return LaunchError.describe(code) }
        state.withLock { $0.frozen = frozen }
        return nil
    }

    /// Freezes or thaws a job's processes.
    /// - Returns: `nil`, or the errno of the failure.
    @discardableResult
    private static func freeze(_ process: LaunchedProcess, _ frozen: Bool) -> Int32? {
        if let cgroup = process.cgroup {
            let code = cgroup.freeze(frozen)
            return code == 0 ? nil : code
        }
        let code = process.processGroup.signal(frozen ? SIGSTOP : SIGCONT)
        return code == 0 ? nil : code
    }

    // MARK: - Completion (on eventQueue)

    private func mainProcessExited(_ status: TerminationStatus) {
        // The epoll thread, which serves every client, handles only the common end; anything
        // more (a teardown under way or to begin, cgroups the job made inside its own to
        // remove, by the thousand if it likes) takes a turn of the job's queue.
        if EpollLoop.shared.isLoopThread, !endedAtOnce(status) {
            eventQueue.async { [self] in mainProcessExited(status) }
            return
        }
        let (process, teardown, waitForTeardown, stopStarting, cgroupEmpty) = state.withLock { state in
            state.mainExit = status
            return (
                state.process, state.teardown, state.teardown != nil && !state.teardownDone,
                state.teardown == nil && state.stopReason != nil, state.cgroupEmpty)
        }
        // A stop is starting its teardown on another thread; its completion reports.
        if stopStarting { return }
        if waitForTeardown {
            // The group may already be gone: end the grace period early.
            teardown?.assumeIsolated { $0.mainProcessExited() }
            return
        }
        if teardown == nil, let process, hasLeftovers(process, cgroupEmpty: cgroupEmpty) {
            // The main process is done, members it left are not: tear them down; the result
            // stays the main process's, and is told now, before the teardown's grace.
            if let onResultKnown { callbackQueue.async { onResultKnown(status.jobResult) } }
            beginTeardown(of: process)
            return
        }
        report()
    }

    /// The common end of a job with a cgroup, with one system call: no stop under way, and the
    /// cgroup removed at once because nothing is left in it. Reports the end.
    /// - Returns: `false`, having changed nothing, when it is not that.
    private func endedAtOnce(_ status: TerminationStatus) -> Bool {
        let cgroup = state.withLock { state -> Cgroup? in
            guard state.teardown == nil, state.stopReason == nil else { return nil }
            return state.process?.cgroup
        }
        guard let cgroup, removeIfEmpty(cgroup) else { return false }
        state.withLock { $0.mainExit = status }
        // A stop that came meanwhile began a teardown: report() waits for it, as for any stop
        // racing the exit.
        report()
        return true
    }

    /// Whether processes of the job outlive its main process: its cgroup is still populated,
    /// or (without one) its process group still has live members, or a process carries the
    /// job's identity (process-group containment: a scan of /proc). A cgroup found empty
    /// this way is removed already (``report()`` then leaves it).
    private func hasLeftovers(_ process: LaunchedProcess, cgroupEmpty: Bool) -> Bool {
        guard let cgroup = process.cgroup else {
            if !process.processGroup.isGone { return true }
            guard let identity = fallbackIdentity else { return false }
            // A look that found nothing while processes were being handed over to orchd is
            // settled by the teardown's own looks (TeardownRun takes nothing as gone on one),
            // which cost the job about 25 ms when there is nothing. One that found nothing,
            // settled, is taken again at once: a chain of processes each starting the next
            // still slipped past a single one now and then.
            for _ in 0..<2 {
                let look = ProcessIdentity.look(for: identity)
                if !look.pids.isEmpty || look.unsettled { return true }
            }
            return false
        }
        if cgroupEmpty { return false }
        if removeIfEmpty(cgroup) { return false }
        // Refused: a live process, or a child cgroup the job made (which `populated` tells
        // apart; report() removes it), or the kernel would not say.
        if cgroup.isPopulated { return true }
        // Empty already; the watcher's word may still be on its way.
        state.withLock { $0.cgroupEmpty = true }
        return false
    }

    /// Removes the job's cgroup if nothing is in it, and notes so: the cheapest test that
    /// nothing is left of the job, since rmdir(2) refuses (EBUSY) while a process is in it,
    /// one system call where reading `cgroup.events` takes three. Nothing can join a removed
    /// cgroup.
    private func removeIfEmpty(_ cgroup: Cgroup) -> Bool {
        guard cgroup.removeIfEmpty() == 0 else { return false }
        state.withLock { state in
            state.cgroupEmpty = true
            state.cgroupRemoved = true
        }
        return true
    }

    /// The identity the process-group fallback scans for: the hook run's, or the job's.
    private var fallbackIdentity: ProcessIdentity.Job? {
        if let hook { return containment?.identity(ofHook: hook) }
        return containment?.identity(ofJob: jobID)
    }

    /// Asks the cgroup watcher, once, to tell when the job's cgroup has no live process left.
    /// Only a teardown waits for that; a job whose cgroup is empty when its main process is
    /// reaped (nearly every one, ``hasLeftovers(_:cgroupEmpty:)``) never has a watch, which
    /// cost each job an inotify watch, two more reads of `cgroup.events` and two turns of the
    /// watcher's queue. The watcher reads the file once its watch exists, so an emptying
    /// before then is not missed.
    private func watchUntilEmpty(_ process: LaunchedProcess) {
        guard let cgroup = process.cgroup, let watcher = containment?.watcher else { return }
        let first = state.withLock { state in
            defer { state.cgroupWatched = true }
            return !state.cgroupWatched
        }
        if first { watcher.whenEmpty(cgroup, on: eventQueue) { [self] in cgroupEmptied() } }
    }

    /// The job's cgroup has no live process left (on eventQueue).
    private func cgroupEmptied() {
        let teardown = state.withLock { state in
            state.cgroupEmpty = true
            return state.teardownDone ? nil : state.teardown
        }
        teardown?.assumeIsolated { $0.targetEmptied() }
        report()
    }

    /// Enqueues onFinished once, when the main process was reaped, any teardown ended and the
    /// cgroup (if any) is empty; then removes the cgroup and finishes the operation.
    private func report() {
        let outcome = state.withLock { state -> (JobResult, Cgroup?)? in
            guard !state.reported, let exit = state.mainExit else { return nil }
            if state.teardown != nil && !state.teardownDone { return nil }
            let cgroup = state.process?.cgroup
            if cgroup != nil && !state.cgroupEmpty { return nil }
            state.reported = true
            return (state.stopReason?.jobResult ?? exit.jobResult, state.cgroupRemoved ? nil : cgroup)
        }
        guard let (result, cgroup) = outcome else { return }
        if let cgroup {
            let code = cgroup.remove()
            if code != 0 { DaemonLog.warning("job \(jobID): cannot remove cgroup \(cgroup.path): \(LaunchError.describe(code))") }
        }
        let endedAt = Date()
        callbackQueue.async { [onFinished] in onFinished(result, endedAt) }
        finish(wasExecuting: true)
    }

    // MARK: - KVO, outside the lock

    private func setExecuting() {
        willChangeValue(forKey: "isExecuting")
        state.withLock { $0.isExecuting = true }
        didChangeValue(forKey: "isExecuting")
    }

    private func finish(wasExecuting: Bool) {
        willChangeValue(forKey: "isFinished")
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        state.withLock { state in
            state.isExecuting = false
            state.isFinished = true
        }
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
        didChangeValue(forKey: "isFinished")
    }
}
