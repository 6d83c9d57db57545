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

    /// Whether launches may go on: `false` for a pause (``shortagePause``, doubling up to
    /// ``shortagePauseCap``) after a launch failed for want of something orchd itself lacks
    /// (file descriptors, memory, processes).
    var isAvailable: Bool { availability.isAvailable.load(ordering: .relaxed) }
    var availabilityChanged: (@Sendable () -> Void)? {
        get { availability.changed.withLock { $0 } }
        set { availability.changed.withLock { $0 = newValue } }
    }
    private let availability: Availability

    /// How long launches pause after one failed for want of something orchd lacks; doubled by
    /// each such failure in a row, up to ``shortagePauseCap``.
    static let shortagePause: Duration = .seconds(1)
    static let shortagePauseCap: Duration = .seconds(4)
    /// The descriptors one launch needs at most (its pipes, pidfd, cgroup, log files and
    /// `/dev/null`, in orchd and in the child's copy of its table).
    static let descriptorsPerLaunch = 8

    /// The executor's availability, shared with the callbacks of its launches.
    private final class Availability: Sendable {
        let isAvailable = Atomic<Bool>(true)
        let changed = Mutex<(@Sendable () -> Void)?>(nil)
        /// The next pause, in milliseconds. Read and written on the control queue only (the
        /// launches' callbacks and the pause's timer run there); an `Atomic` to be `Sendable`.
        private let nextPauseMilliseconds = Atomic<Int>(Int(LocalExecutor.shortagePause.microseconds / 1000))
        let queue: DispatchQueue

        init(queue: DispatchQueue) {
            self.queue = queue
        }

        /// Holds launches after one failed for want of something orchd lacks, then calls
        /// `changed` (on the control queue) so that the scheduler starts what waits.
        /// - Parameter descriptors: the launch lacked file descriptors: launches go on only once
        ///   ``LocalExecutor/descriptorsPerLaunch`` can be opened, looked at without claiming a
        ///   job (each claim sent back records a `started` and a `requeued` event); meanwhile
        ///   ``DescriptorRelief/process`` is asked for them, each time they are looked at.
        func pause(descriptors: Bool) {
            guard isAvailable.exchange(false, ordering: .relaxed) else { return }
            if descriptors { DescriptorRelief.process.ask() }
            resume(afterPause: descriptors)
        }

        /// A launch got its process: the next shortage pauses for the shortest time again.
        func launched() {
            nextPauseMilliseconds.store(Int(LocalExecutor.shortagePause.microseconds / 1000), ordering: .relaxed)
        }

        private func resume(afterPause descriptors: Bool) {
            let pause = nextPauseMilliseconds.load(ordering: .relaxed)
            nextPauseMilliseconds.store(min(pause * 2, Int(LocalExecutor.shortagePauseCap.microseconds / 1000)), ordering: .relaxed)
            queue.asyncAfter(deadline: .now() + .milliseconds(pause)) { [self] in
                if descriptors && !Self.descriptorsFree(LocalExecutor.descriptorsPerLaunch) {
                    DescriptorRelief.process.ask()
                    return resume(afterPause: true)
                }
                isAvailable.store(true, ordering: .relaxed)
                changed.withLock { $0 }?()
            }
        }

        /// Whether `count` descriptors can be opened now (each then closed again).
        private static func descriptorsFree(_ count: Int) -> Bool {
            var opened: [Int32] = []
            defer { for fd in opened { close(fd) } }
            for _ in 0..<count {
                let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { return false }
                opened.append(fd)
            }
            return true
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
        let shortage = Mutex<LaunchError?>(nil)
        let availability = self.availability
        let operation = JobOperation(
            jobID: launch.job.id, request: request, launcher: launcher, reaper: reaper,
            teardown: .standard(grace: launch.teardownGrace), containment: containment, callbackQueue: callbackQueue,
            onStarted: { started in
                switch started {
                case .success: availability.launched()
                case .failure(let error) where Self.isResourceShortage(error.code): shortage.withLock { $0 = error }
                case .failure: break
                }
                onStarted(started.map(ExecutorStart.process))
            },
            onFinished: { result in
                if case .spawnFailed = result, let error = shortage.withLock({ $0 }) {
                    let descriptors = error.code == EMFILE || error.code == ENFILE
                    availability.pause(descriptors: descriptors)
                    let when = descriptors ? "once it has descriptors again" : "in a moment"
                    return onEnd(.released(reason: "\(error.message); orchd starts it \(when)"))
                }
                onEnd(.finished(result))
            }, onResultKnown: launch.onResultKnown)
        launch.operationQueue.addOperation(operation)
        return operation
    }
}
