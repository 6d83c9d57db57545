import Dispatch
import Foundation
import OrchestratorAPI

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
    }

    /// Always: this machine is always there.
    var isAvailable: Bool { true }
    var availabilityChanged: (@Sendable () -> Void)?

    /// Nothing: recovery finds a local attempt by its recorded process or its identity.
    func prepare(_ job: Job, in store: JobStore) throws {}

    func launch(
        _ launch: ExecutorLaunch,
        onStarted: @escaping @Sendable (Result<ExecutorStart, LaunchError>) -> Void,
        onEnd: @escaping @Sendable (ExecutorEnd) -> Void
    ) -> any ExecutorAttempt {
        var request = launch.request
        request.cgroup = containment.cgroup(forJob: launch.job.id, attempt: launch.job.attempt)
        let operation = JobOperation(
            jobID: launch.job.id, request: request, launcher: launcher, reaper: reaper,
            teardown: .standard(grace: launch.teardownGrace), containment: containment, callbackQueue: callbackQueue,
            onStarted: { onStarted($0.map(ExecutorStart.process)) },
            onFinished: { onEnd(.finished($0)) }, onResultKnown: launch.onResultKnown)
        launch.operationQueue.addOperation(operation)
        return operation
    }
}
