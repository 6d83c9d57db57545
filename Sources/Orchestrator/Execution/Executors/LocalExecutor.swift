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
    /// (file descriptors, memory, processes), and while descriptors are short, between a
    /// used-up ``launchAllowance`` and the next count.
    var isAvailable: Bool { availability.isAvailable.load(ordering: .relaxed) }
    var availabilityChanged: (@Sendable () -> Void)? {
        get { availability.changed.withLock { $0 } }
        set { availability.changed.withLock { $0 = newValue } }
    }
    private let availability: Availability

    /// How many launches may be claimed now: unlimited (`Int.max`) unless a launch lacked
    /// file descriptors, and then as many as the descriptors free at the last count allow
    /// (``descriptorsPerLaunch`` each), until ``plentyOfDescriptors`` are free again. Read on
    /// the control queue; claims report what they took with ``claimed(_:)``.
    var launchAllowance: Int { availability.allowance.load(ordering: .relaxed) }

    /// Takes `count` launches claimed on the control queue off ``launchAllowance``; once it is
    /// used up, launches wait (``isAvailable``) for the descriptors to be counted again.
    func claimed(_ count: Int) {
        availability.claimed(count)
    }

    /// How long launches pause after one failed for want of something orchd lacks; doubled by
    /// each such failure in a row, up to ``shortagePauseCap``.
    static let shortagePause: Duration = .seconds(1)
    static let shortagePauseCap: Duration = .seconds(4)
    /// The descriptors one launch needs at most (its report pipe where the child does not
    /// share orchd's memory, pidfd, cgroup, log files and `/dev/null`, in orchd and in the
    /// child's copy of its table).
    static let descriptorsPerLaunch = 8
    /// While descriptors are short, with this many free (beyond one launch's, kept back) they
    /// are short no more, and ``launchAllowance`` is unlimited again.
    static let plentyOfDescriptors = descriptorsPerLaunch * 32
    /// While descriptors are short, how long after the allowance is used up they are counted
    /// again: the launches it allowed have opened and closed theirs by then, mostly.
    static let recountDelay: DispatchTimeInterval = .milliseconds(10)

    /// The executor's availability, shared with the callbacks of its launches. Its state is
    /// read and written on the control queue only (the scheduler's claims, the launches'
    /// callbacks and its timers run there); `Atomic`s to be `Sendable`.
    private final class Availability: Sendable {
        let isAvailable = Atomic<Bool>(true)
        let changed = Mutex<(@Sendable () -> Void)?>(nil)
        let allowance = Atomic<Int>(.max)
        /// A launch lacked descriptors, and fewer than ``LocalExecutor/plentyOfDescriptors`` were
        /// free at the last count.
        private let descriptorsShort = Atomic<Bool>(false)
        /// A check that makes launches available again is scheduled.
        private let checkScheduled = Atomic<Bool>(false)
        /// The next pause, in milliseconds.
        private let nextPauseMilliseconds = Atomic<Int>(Int(LocalExecutor.shortagePause.microseconds / 1000))
        let queue: DispatchQueue

        init(queue: DispatchQueue) {
            self.queue = queue
        }

        /// Holds launches after one failed for want of something orchd lacks, then calls
        /// `changed` (on the control queue) so that the scheduler starts what waits.
        /// - Parameter descriptors: the launch lacked file descriptors: launches go on only once
        ///   ``LocalExecutor/descriptorsPerLaunch`` can be opened, looked at without claiming a
        ///   job (each claim sent back records a `started` and a `requeued` event), and then
        ///   only as many as the free descriptors allow (``allowance``); meanwhile
        ///   ``DescriptorRelief/process`` is asked for them, each time they are looked at.
        func pause(descriptors: Bool) {
            isAvailable.store(false, ordering: .relaxed)
            if descriptors {
                descriptorsShort.store(true, ordering: .relaxed)
                allowance.store(0, ordering: .relaxed)
                DescriptorRelief.process.ask()
            }
            scheduleCheck(afterPause: true)
        }

        /// A launch got its process: the next shortage pauses for the shortest time again.
        func launched() {
            nextPauseMilliseconds.store(Int(LocalExecutor.shortagePause.microseconds / 1000), ordering: .relaxed)
        }

        func claimed(_ count: Int) {
            let left = allowance.load(ordering: .relaxed)
            guard left != .max, count > 0 else { return }
            allowance.store(max(0, left - count), ordering: .relaxed)
            guard left <= count else { return }
            isAvailable.store(false, ordering: .relaxed)
            scheduleCheck(afterPause: false)
        }

        /// Makes launches available again after the next pause (doubled for the one after),
        /// or after ``LocalExecutor/recountDelay``; while descriptors are short, only once
        /// enough are free, and with an ``allowance`` of what they allow. One at a time.
        private func scheduleCheck(afterPause: Bool) {
            guard !checkScheduled.exchange(true, ordering: .relaxed) else { return }
            var delay = LocalExecutor.recountDelay
            if afterPause {
                let pause = nextPauseMilliseconds.load(ordering: .relaxed)
                nextPauseMilliseconds.store(
                    min(pause * 2, Int(LocalExecutor.shortagePauseCap.microseconds / 1000)), ordering: .relaxed)
                delay = .milliseconds(pause)
            }
            queue.asyncAfter(deadline: .now() + delay) { [self] in
                checkScheduled.store(false, ordering: .relaxed)
                if descriptorsShort.load(ordering: .relaxed) {
                    // One launch's worth is kept back for the rest of orchd (the database,
                    // libdispatch's monitor).
                    let usable = Self.freeDescriptors() - LocalExecutor.descriptorsPerLaunch
                    guard usable >= LocalExecutor.descriptorsPerLaunch else {
                        DescriptorRelief.process.ask()
                        return scheduleCheck(afterPause: true)
                    }
                    let over = usable >= LocalExecutor.plentyOfDescriptors
                    descriptorsShort.store(!over, ordering: .relaxed)
                    allowance.store(over ? .max : usable / LocalExecutor.descriptorsPerLaunch, ordering: .relaxed)
                }
                if !isAvailable.exchange(true, ordering: .relaxed) { changed.withLock { $0 }?() }
            }
        }

        /// How many descriptors are free now: the soft `RLIMIT_NOFILE` less those open below it
        /// (`/proc/self/fd`). Counted without opening any more but the listing's own, which
        /// is not counted as used: opening until `EMFILE` would leave orchd none for a moment.
        /// 0 when it cannot tell.
        private static func freeDescriptors() -> Int {
            guard let cap = DescriptorRelief.softLimit(), let names = ProcStat.listedEntryNames(of: "/proc/self/fd") else {
                return 0
            }
            let open = names.reduce(0) { count, name in (Int(name).map { $0 < cap } ?? false) ? count + 1 : count }
            return max(0, cap - max(0, open - 1))
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
            onFinished: { result, endedAt in
                if case .spawnFailed = result, let error = shortage.withLock({ $0 }) {
                    let descriptors = error.code == EMFILE || error.code == ENFILE
                    availability.pause(descriptors: descriptors)
                    let when = descriptors ? "once it has descriptors again" : "in a moment"
                    return onEnd(.released(reason: "\(error.message); orchd starts it \(when)"))
                }
                onEnd(.finished(result, at: endedAt))
            }, onResultKnown: launch.onResultKnown)
        launch.operationQueue.addOperation(operation)
        return operation
    }
}
