import Dispatch
import Foundation
import OrchestratorAPI
import Synchronization

/// Runs attempts as processes of this machine: one ``JobOperation`` per attempt on the
/// queue's OperationQueue, in its own cgroup (or process group), spawned by
/// ``ProcessLauncher`` and reaped by ``ChildReaper``. The default executor.
final class LocalExecutor: JobExecutor {
    private let launcher = ProcessLauncher()
    private let reaper = ChildReaper()
    private let containment: Containment
    private let callbackQueue: DispatchQueue

    /// Creates the executor.
    /// - Parameters:
    ///   - containment: how job processes are kept hold of.
    ///   - callbackQueue: the control queue, where callbacks arrive.
    init(containment: Containment, callbackQueue: DispatchQueue) {
        self.containment = containment
        self.callbackQueue = callbackQueue
        self.availability = Availability(queue: callbackQueue)
    }

    /// Whether launches may go on: `false` for ``shortagePause`` after a launch failed for
    /// want of something orchd itself lacks (file descriptors, memory, processes).
    var isAvailable: Bool { availability.isAvailable.load(ordering: .relaxed) }
    var availabilityChanged: (@Sendable () -> Void)? {
        get { availability.changed.withLock { $0 } }
        set { availability.changed.withLock { $0 = newValue } }
    }
    private let availability: Availability

    /// How long launches pause after one failed for want of something orchd lacks.
    static let shortagePause: Duration = .seconds(1)

    /// The executor's availability, shared with the callbacks of its launches.
    private final class Availability: Sendable {
        let isAvailable = Atomic<Bool>(true)
        let changed = Mutex<(@Sendable () -> Void)?>(nil)
        let queue: DispatchQueue

        init(queue: DispatchQueue) {
            self.queue = queue
        }

        /// Holds launches for ``LocalExecutor/shortagePause``, then calls `changed` (on the
        /// control queue) so that the scheduler starts what waits.
        func pause() {
            guard isAvailable.exchange(false, ordering: .relaxed) else { return }
            queue.asyncAfter(deadline: .now() + LocalExecutor.shortagePause.dispatchInterval) { [self] in
                isAvailable.store(true, ordering: .relaxed)
                changed.withLock { $0 }?()
            }
        }
    }

    /// Whether a launch that failed with `code` (an errno) failed for want of something orchd
    /// itself lacks right now, not because of the job: descriptors (the child's table is a copy
    /// of orchd's), memory, or processes (clone's `EAGAIN`). Such a job is not failed: its claim
    /// is given back and it starts once launches go on.
    static func isResourceShortage(_ code: Int32) -> Bool {
        code == EMFILE || code == ENFILE || code == ENOMEM || code == EAGAIN
    }

    /// Nothing: recovery finds a local attempt by its recorded process or its identity.
    func prepare(_ job: Job, in store: JobStore) throws {}

    func launch(
        _ launch: ExecutorLaunch,
        onStarted: @escaping @Sendable (Result<ExecutorStart, LaunchError>) -> Void,
        onEnd: @escaping @Sendable (ExecutorEnd) -> Void
    ) -> any ExecutorAttempt {
        var request = launch.request
        request.cgroup = containment.cgroup(forJob: launch.job.id, attempt: launch.job.attempt)
        // Both callbacks run on the control queue, onStarted first: the launch error it carries
        // decides what the end is.
        let shortage = Mutex<String?>(nil)
        let availability = self.availability
        let operation = JobOperation(
            jobID: launch.job.id, request: request, launcher: launcher, reaper: reaper,
            teardown: .standard(grace: launch.teardownGrace), containment: containment, callbackQueue: callbackQueue,
            onStarted: { started in
                if case .failure(let error) = started, Self.isResourceShortage(error.code) {
                    shortage.withLock { $0 = error.message }
                }
                onStarted(started.map(ExecutorStart.process))
            },
            onFinished: { result in
                if case .spawnFailed = result, let message = shortage.withLock({ $0 }) {
                    availability.pause()
                    return onEnd(.released(reason: "\(message); orchd starts it again in \(TimeSpan.format(Self.shortagePause))"))
                }
                onEnd(.finished(result))
            }, onResultKnown: launch.onResultKnown)
        launch.operationQueue.addOperation(operation)
        return operation
    }
}
