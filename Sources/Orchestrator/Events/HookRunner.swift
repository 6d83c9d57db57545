import Dispatch
import Foundation
import OrchestratorAPI
import Synchronization

/// Runs the per-queue hook commands (`orchctl queue set Q --on failed='...'`) when their
/// events are recorded.
///
/// Called on the control queue, it only looks up the hooks and hands each command to its own
/// `OperationQueue`, so a slow hook never delays the scheduler. A hook runs with `/bin/sh -c`,
/// in `/`, with the event's fields in `ORCHD_*` variables and its output discarded. Hooks are
/// processes, so a hook that crashes harms nothing but itself; its failure is logged.
///
/// Hooks run as orchd's own user (root under the system service), not as the job's owner: a
/// hook belongs to its queue, set by an admin (`queue set` needs root or the admin group), as
/// trusted as orchd.conf, and fires for every user's jobs. What a job's owner chose (its name,
/// its command) reaches the hook only as `ORCHD_*` environment values, never as part of the
/// command line, so it is data unless the admin's command evaluates it.
///
/// Each hook run is contained like a job (docs/ARCHITECTURE.md, Containment): it starts in its
/// own cgroup `hook-<n>` beside the job groups, or in the process-group fallback its processes
/// carry `ORCHD_HOOK_ID=<n>` and `ORCHD_STATE_DIR`. Whatever it starts is torn down (SIGTERM,
/// the grace, then `cgroup.kill` or SIGKILL) when it runs longer than its time limit, when its
/// main process exits leaving members behind, and at ``stop()``.
final class HookRunner: JobObserver {
    /// The longest a hook may run, unless the initializer says otherwise.
    static let defaultTimeout: Duration = .seconds(60)
    /// How long a hook's processes get between SIGTERM and the kill.
    static let teardownGrace: Duration = .seconds(5)
    /// A hook that could not start for want of something orchd lacked is tried again after
    /// this, doubled for each such failure in a row up to 4 s, at most ``shortageRetries``
    /// times (about a minute).
    static let shortageRetryDelay: Duration = .seconds(1)
    static let shortageRetries = 16

    private unowned let scheduler: Scheduler
    private let containment: Containment
    private let timeout: Duration
    private let hooks = OperationQueue()
    private let launcher = ProcessLauncher()
    private let reaper = ChildReaper()
    private let callbacks = DispatchQueue(label: "orchd.hooks")
    /// The hook runs not yet finished, by number; the next number; whether ``stop()`` ran.
    private let runs = Mutex<(running: [Int64: JobOperation], lastNumber: Int64, stopped: Bool)>(([:], 0, false))

    /// Creates the hook runner of a daemon.
    /// - Parameters:
    ///   - scheduler: looks up the hooks of a queue and the job of an event.
    ///   - containment: the daemon's containment, in which each hook run gets its own cgroup
    ///     or identity.
    ///   - timeout: the longest a hook may run before it is torn down (60 s in orchd).
    init(scheduler: Scheduler, containment: Containment, timeout: Duration = HookRunner.defaultTimeout) {
        self.scheduler = scheduler
        self.containment = containment
        self.timeout = timeout
        hooks.name = "orchd.hooks"
        hooks.maxConcurrentOperationCount = 4
    }

    /// The hook events an event-log event fires (the table is ``HookEvent``).
    static func hookKinds(of event: Event) -> [String] {
        HookEvent.fired(byEventKind: event.kind, result: event.result).map(\.rawValue)
    }

    func eventRecorded(_ event: Event) {
        guard let queue = event.queue else { return }
        // Observers are called on the control queue, isolated to the scheduler (checked).
        let configured = scheduler.assumeIsolated { $0.hooks(of: queue) }
        // Most queues have no hook: no kinds to build for every event of every job.
        guard !configured.isEmpty else { return }
        let fired = Self.hookKinds(of: event).filter { configured[$0] != nil }
        guard !fired.isEmpty else { return }
        let job = event.jobId.flatMap { id in scheduler.assumeIsolated { $0.storedJob(id) } }
        for hookEvent in fired {
            guard let command = configured[hookEvent] else { continue }
            let label = "hook '\(command)' for event \(event.seq) (\(EventDescription.message(event)))"
            run(command, environment: Self.environment(for: event, hookEvent: hookEvent, queue: queue, job: job), label: label)
        }
    }

    /// A hook's environment: the event's fields, each set only when the event has it.
    ///
    /// `ORCHD_EVENT` is the hook event that runs the command (`failed`), `ORCHD_RESULT` the
    /// job's result (`timed_out`); `ORCHD_EXIT_CODE` is set only when the process exited
    /// (`succeeded`, `failed`), `ORCHD_SIGNAL` only when a signal ended it, so a hook never
    /// reads an empty or stale exit code as one.
    static func environment(for event: Event, hookEvent: String, queue: QueueName, job: Job?) -> [String: String] {
        var environment = [
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "ORCHD_EVENT": hookEvent, "ORCHD_EVENT_SEQ": String(event.seq), "ORCHD_QUEUE": queue.rawValue,
        ]
        environment["ORCHD_JOB_ID"] = event.jobId?.description
        environment["ORCHD_RESULT"] = event.result
        if event.result == "succeeded" || event.result == "failed" {
            environment["ORCHD_EXIT_CODE"] = event.exitCode.map(String.init)
        }
        if event.result == "signaled" {
            environment["ORCHD_SIGNAL"] = event.signal.map(String.init)
        }
        environment["ORCHD_ATTEMPT"] = event.attempt.map(String.init)
        environment["ORCHD_JOB_NAME"] = job?.spec.name
        environment["ORCHD_COMMAND"] = job?.spec.command.displayText
        return environment
    }

    /// A run's result for the log, with what the hook's discarded output would have said
    /// first: its exit status (127: the shell found no such command) or signal.
    static func describe(_ result: JobResult) -> String {
        switch result {
        case .failed(let code): "failed with exit status \(code)\(code == 127 ? " (command not found)" : "") (its output goes to /dev/null)"
        case .signaled(let signal): "signaled (signal \(signal))"
        case .spawnFailed(let reason): "spawn_failed: \(reason)"
        default: result.name
        }
    }

    /// Starts one hook run: `/bin/sh -c command`, contained in its own cgroup (or identity),
    /// torn down after the time limit. Nothing starts after ``stop()``.
    /// - Parameters:
    ///   - command: the shell command.
    ///   - environment: its environment; `ORCHD_HOOK_ID` and `ORCHD_STATE_DIR` are added.
    ///   - label: names the hook in log messages.
    ///   - onFinished: called with the run's result once its processes are all gone (tests).
    ///   - shortages: how many times in a row this run could not start for want of something
    ///     orchd itself lacked (descriptors, memory, processes). Such a run is tried again, as
    ///     a job's launch goes back to its queue: after ``shortageRetryDelay``, doubling up to
    ///     4 s, at most ``shortageRetries`` times.
    func run(
        _ command: String, environment: [String: String], label: String, shortages: Int = 0,
        onFinished: (@Sendable (JobResult) -> Void)? = nil
    ) {
        let number: Int64? = runs.withLock { runs in
            guard !runs.stopped else { return nil }
            runs.lastNumber += 1
            return runs.lastNumber
        }
        guard let number else { return }
        let given = environment
        var environment = environment
        environment[ProcessIdentity.hookVariable] = String(number)
        environment[ProcessIdentity.stateDirectoryVariable] = containment.stateDirectory
        let request = LaunchRequest(
            arguments: ["/bin/sh", "-c", command], workingDirectory: "/", environment: environment,
            standardOutputPath: "/dev/null", standardErrorPath: "/dev/null",
            cgroup: containment.cgroup(forHook: number))
        // The launch error onStarted saw, which decides whether the run is tried again.
        let shortage = Mutex<LaunchError?>(nil)
        let jobID = environment[ProcessIdentity.jobVariable].flatMap(Int64.init).map(JobID.init(rawValue:)) ?? JobID(rawValue: 0)
        let operation = JobOperation(
            jobID: jobID, request: request, launcher: launcher, reaper: reaper,
            teardown: .standard(grace: Self.teardownGrace), containment: containment, hook: number, callbackQueue: callbacks,
            onStarted: { started in
                if case .failure(let error) = started, LocalExecutor.isResourceShortage(error.code) {
                    shortage.withLock { $0 = error }
                }
            },
            onFinished: { [weak self] result, _ in
                guard let self else { return }
                _ = runs.withLock { $0.running.removeValue(forKey: number) }
                if case .spawnFailed = result, shortages < Self.shortageRetries, let error = shortage.withLock({ $0 }) {
                    if error.code == EMFILE || error.code == ENFILE { DescriptorRelief.process.ask() }
                    let delay = Self.shortageRetryDelay * (1 << min(shortages, 2))
                    if shortages == 0 { DaemonLog.warning("\(label) could not start: \(error.message); trying again") }
                    callbacks.asyncAfter(deadline: .now() + delay.dispatchInterval) { [weak self] in
                        self?.run(command, environment: given, label: label, shortages: shortages + 1, onFinished: onFinished)
                    }
                    return
                }
                if result != .succeeded { DaemonLog.warning("\(label) ended \(Self.describe(result))") }
                onFinished?(result)
            })
        let stoppedMeanwhile = runs.withLock { runs in
            runs.running[number] = operation
            return runs.stopped
        }
        // stop() ran between numbering and now: the operation finishes without spawning.
        if stoppedMeanwhile { operation.stop(reason: .shutdown) }
        callbacks.asyncAfter(deadline: .now() + timeout.dispatchInterval) { [weak operation] in
            operation?.stop(reason: .timedOut)
        }
        hooks.addOperation(operation)
    }

    /// Stops the hook runner at the daemon's stop: no hook starts any more, and every running
    /// hook is torn down; returns when all their processes are gone (at most the grace, then
    /// the kill).
    func stop() {
        let running = runs.withLock { runs in
            runs.stopped = true
            return Array(runs.running.values)
        }
        for operation in running { operation.stop(reason: .shutdown) }
        hooks.waitUntilAllOperationsAreFinished()
    }
}
