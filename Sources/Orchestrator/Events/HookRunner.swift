import Dispatch
import Foundation
import OrchestratorAPI

/// Runs the per-queue hook commands (`orchctl queue set Q --on failed='...'`) when their
/// events are recorded.
///
/// Called on the control queue, it only looks up the hooks and hands each command to its own
/// `OperationQueue`, so a slow hook never delays the scheduler. A hook runs with `/bin/sh -c`,
/// in `/`, with the event's fields in `ORCHD_*` variables and its output discarded; one that
/// runs longer than ``timeout`` is torn down like a job. Hooks are processes, so a hook that
/// crashes harms nothing but itself; its failure is logged.
final class HookRunner: JobObserver {
    /// The longest a hook may run.
    static let timeout: Duration = .seconds(60)

    private unowned let scheduler: Scheduler
    private let hooks = OperationQueue()
    private let launcher = ProcessLauncher()
    private let reaper = ChildReaper()
    private let callbacks = DispatchQueue(label: "orchd.hooks")

    init(scheduler: Scheduler) {
        self.scheduler = scheduler
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
        let fired = Self.hookKinds(of: event).filter { configured[$0] != nil }
        guard !fired.isEmpty else { return }
        let job = event.jobId.flatMap { id in scheduler.assumeIsolated { $0.storedJob(id) } }
        for hookEvent in fired {
            guard let command = configured[hookEvent] else { continue }
            run(command, environment: Self.environment(for: event, hookEvent: hookEvent, queue: queue, job: job), for: event)
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

    private func run(_ command: String, environment: [String: String], for event: Event) {
        let request = LaunchRequest(
            arguments: ["/bin/sh", "-c", command], workingDirectory: "/", environment: environment,
            standardOutputPath: "/dev/null", standardErrorPath: "/dev/null")
        let label = "hook '\(command)' for event \(event.seq) (\(EventDescription.message(event)))"
        let operation = JobOperation(
            jobID: event.jobId ?? JobID(rawValue: 0), request: request, launcher: launcher, reaper: reaper,
            teardown: .standard(grace: .seconds(5)), callbackQueue: callbacks,
            onStarted: { _ in },
            onFinished: { result in
                if result != .succeeded { DaemonLog.warning("\(label) ended \(result.name)") }
            })
        callbacks.asyncAfter(deadline: .now() + Self.timeout.dispatchInterval) { [weak operation] in
            operation?.stop(reason: .timedOut)
        }
        hooks.addOperation(operation)
    }
}
