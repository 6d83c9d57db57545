import CPosix
import Dispatch
import Foundation

/// Runs a ``Teardown`` against one job's processes (a ``TeardownTarget``: its process group,
/// and its cgroup or the processes carrying its identity), driven by events and a timer.
///
/// Each step first checks whether the target is gone (``TeardownTarget/isGone``) and, if so,
/// ends the run. A `.wait` arms a `DispatchSourceTimer` and ends early once the target is gone:
/// ``targetEmptied()`` (the cgroup's `populated 0`) says so for a cgroup; without one, the
/// members are watched by pidfd. So a job whose processes exit on `SIGTERM` does not wait out
/// the grace, also when its main process had exited before (a teardown of leftovers). No
/// thread sleeps.
///
/// An actor on the job's event queue (``DispatchQueueExecutor``): its timers and pidfd watches
/// fire there, and the job's callbacks enter it with `assumeIsolated`.
actor TeardownRun {
    private let steps: [TeardownStep]
    private let target: TeardownTarget
    private let executor: DispatchQueueExecutor
    private var queue: DispatchQueue { executor.queue }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private var nextStep = 0
    private var timer: (any DispatchSourceTimer)?
    private var completion: (@Sendable () -> Void)?
    /// Watches of the members still dying, by pidfd.
    private var exitWatches: [Int32: EpollLoop.Watch] = [:]
    /// Whether a second look at a target found gone within the grace is scheduled.
    private var confirmingGone = false
    /// The members found outside the job's process group so far (`nil` before the first look).
    private var escapersSeen: Set<Int32>?
    /// When the run began, in clock ticks since boot (``ProcStat/ticksNow()``): a member found
    /// outside the group later, but started before this, was only missed by earlier looks.
    private let beganAtTicks = ProcStat.ticksNow()
    /// Whether a member outside the process group appeared after the first look: something
    /// goes on starting processes in new sessions, so the grace is waited out
    /// (``finishOnceGone()``).
    private var escapersAppeared = false
    /// The members sent the last step's signal again after it (``awaitMembersExit()``).
    private var signalledAfterLastStep: Set<Int32> = []
    /// The last signal step's signal and what it reached, so that a member its look missed
    /// (in its handover to orchd as its parent exited) gets it too (``awaitMembersExit()``).
    private var lastSignal: (signal: Int32, reached: TeardownTarget.Signalled)?
    /// How long after a target without a cgroup was found gone within the grace it is looked
    /// at again (``finishOnceGone()``).
    static let goneConfirmationDelay = DispatchTimeInterval.milliseconds(25)

    /// The most members one run watches by pidfd at a time: a job that left hundreds of
    /// processes must not take as many of the daemon's descriptors (its connections, its
    /// other jobs' spawns need them). The next ones are watched as these exit.
    static let mostWatchedMembers = 16

    /// How long to wait, after the last step, for signalled members to actually exit before
    /// giving up (a member in uninterruptible sleep, or one we may not signal). A job in a
    /// cgroup still ends only once its cgroup is empty (``JobOperation``).
    static let exitWaitLimit: Duration = .seconds(5)

    /// - Parameters:
    ///   - teardown: the steps to run.
    ///   - target: the processes to signal.
    ///   - queue: a serial queue that owns the run's state and runs `completion`.
    init(teardown: Teardown, target: TeardownTarget, queue: DispatchQueue) {
        self.steps = teardown.steps
        self.target = target
        self.executor = DispatchQueueExecutor(queue: queue)
    }

    /// Starts the steps; `completion` runs once on the queue when the target is gone or the
    /// last step has run and its members exited (or ``exitWaitLimit`` passed).
    nonisolated func start(completion: @escaping @Sendable () -> Void) {
        executor.queue.async {
            self.assumeIsolated { run in
                run.completion = completion
                run.advance()
            }
        }
    }

    /// Tells the run the group's leader has exited (call on the queue, with `assumeIsolated`).
    /// Ends the run now if nothing of the group is left.
    func mainProcessExited() {
        guard completion != nil else { return }
        if target.isGone { return finishOnceGone() }
        // Members signalled with the leader may still be dying: watch them by pidfd and end
        // the grace early once they are gone, instead of waiting it out. (A cgroup's
        // emptiness arrives as targetEmptied().)
        if target.cgroup == nil && exitWatches.isEmpty { awaitMembersExit() }
    }

    /// Sends `signal` to what is left of the target now, the steps going on as planned (call
    /// on the queue, with `assumeIsolated`): a cancel with `--signal` that comes while the
    /// job is torn down already, by an earlier cancel or a timeout, or while the leftovers of
    /// a main process that exited are (`KILL` ends the grace).
    func signalNow(_ signal: Int32) {
        guard completion != nil, !target.isGone else { return }
        target.signal(signal)
    }

    /// Tells the run the job's cgroup is empty (`populated 0`) (call on the queue, with
    /// `assumeIsolated`).
    func targetEmptied() {
        finish()
    }

    private func advance() {
        timer = nil
        cancelExitWatches()
        guard completion != nil else { return }
        while nextStep < steps.count {
            // Without a cgroup one look that finds nothing is not proof (finishOnceGone()):
            // the step's signal goes out anyway, to whatever its own look finds.
            if target.cgroup != nil, target.isGone { break }
            let step = steps[nextStep]
            nextStep += 1
            switch step {
            case .signal(let signal):
                lastSignal = (signal, target.signal(signal))
            case .wait(let duration):
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + duration.dispatchInterval)
                timer.setEventHandler { [weak self] in self?.assumeIsolated { $0.advance() } }
                self.timer = timer
                timer.activate()
                // Without a cgroup nothing else would end the grace early: leftovers of a main
                // process that already exited would wait it out however fast they exit.
                if target.cgroup == nil { awaitMembersExit() }
                return
            }
        }
        awaitMembersExit()
    }

    /// Waits (by pidfd; pidfd_open(2) works for non-children too) until the live members
    /// exit, then ends the run once nothing of the target is left. During a `.wait` step the
    /// step's timer caps it; after the last step (signals are in flight, but delivery is
    /// asynchronous), ``exitWaitLimit`` does, counted from the last look that found a member
    /// not yet signalled: a job that goes on starting processes is stopped, not given up on.
    private func awaitMembersExit() {
        if target.isGone { return finishOnceGone() }
        if timer == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.exitWaitLimit.dispatchInterval)
            timer.setEventHandler { [weak self] in self?.assumeIsolated { $0.finish() } }
            self.timer = timer
            timer.activate()
        }
        // A cgroup's emptiness is watched by inotify (targetEmptied()), not member by member.
        guard target.cgroup == nil else { return }
        var unwatched = false
        let members = target.liveMembers()
        if let seen = escapersSeen {
            // One started since the run began is a process still leaving the group (a chain);
            // one started before was there all along, missed by the earlier looks as the main
            // process that was its parent exited and handed it to orchd. Within a tick of the
            // start it counts as new.
            let appeared = members.outsideGroup.subtracting(seen)
            if appeared.contains(where: { pid in
                // Gone already: its start cannot be told, so it counts as new.
                guard let started = ProcStat.startTicks(pid: pid) else { return true }
                return started + 1 >= beganAtTicks
            }) {
                escapersAppeared = true
            }
            escapersSeen = seen.union(members.outsideGroup)
        } else {
            escapersSeen = members.outsideGroup
        }
        // Within a grace, a member the step's signal missed (its look missed it in its
        // handover to orchd, as the main process that was its parent exited) gets that
        // signal now, once: else a leftover would live out the whole grace untouched.
        if nextStep < steps.count, let (signal, reached) = lastSignal {
            var now = reached
            for pid in members.all where !now.reached(pid) {
                kill(pid, signal)
                now.processes.insert(pid)
            }
            lastSignal = (signal, now)
        }
        // After the last step, a member found that its signal may have missed (one a scan
        // missed in its handover to orchd, or one started since) gets it too: a chain of
        // processes each starting the next in a new session is stopped by the first look
        // that sees it, not only by the one at the step.
        if nextStep >= steps.count, case .signal(let last)? = steps.last {
            var signalledNew = false
            for pid in members.all where signalledAfterLastStep.insert(pid).inserted {
                kill(pid, last)
                signalledNew = true
            }
            if signalledNew { timer?.schedule(deadline: .now() + Self.exitWaitLimit.dispatchInterval) }
        }
        for pid in members.all.prefix(Self.mostWatchedMembers) {
            let pidfd = cposix_pidfd_open(pid)
            guard pidfd >= 0 else {
                // ESRCH: already gone. Anything else (out of descriptors): not watched.
                if errno != ESRCH { unwatched = true }
                continue
            }
            exitWatches[pidfd] = EpollLoop.shared.watch(pidfd, for: .readable, on: queue) { [weak self] _, _ in
                self?.assumeIsolated { run in
                    guard let watch = run.exitWatches.removeValue(forKey: pidfd) else { return }
                    watch.cancel { close(pidfd) }
                    if run.exitWatches.isEmpty && run.completion != nil { run.awaitMembersExit() }
                }
            }
        }
        guard exitWatches.isEmpty else { return }
        // Nothing watched: the members exited meanwhile, or they cannot be watched (or even
        // listed) now for want of descriptors. Look again shortly, never at once: the second
        // would be a loop without end (the limit's timer still ends the wait).
        if !unwatched && target.isGone { return finishOnceGone() }
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            self?.assumeIsolated { run in
                if run.completion != nil && run.exitWatches.isEmpty { run.awaitMembersExit() }
            }
        }
    }

    /// Ends the run, its target having been found gone; a target without a cgroup must be
    /// found gone once more, ``goneConfirmationDelay`` later, and within the grace (steps still
    /// to come) no process may have left the job's process group since the first look. A scan
    /// can miss a process whose parent is exiting and handing it over to orchd (for that
    /// moment it is in neither's list of children): a chain of such processes, each starting
    /// the next in a new session, would otherwise end its job's grace early and never get the
    /// SIGKILL that follows it, or outlive that SIGKILL. Such a job waits out its grace, as
    /// without this early end, and after the last step each look signals what it finds until
    /// two looks find nothing. A cgroup's `populated 0` misses nothing.
    private func finishOnceGone() {
        guard target.cgroup == nil else { return finish() }
        guard !confirmingGone else { return }
        confirmingGone = true
        // Looked at again either way: a job whose processes went on leaving its group keeps
        // being looked at until its grace ends, so that what it starts is watched and gets
        // the next step's signal.
        queue.asyncAfter(deadline: .now() + Self.goneConfirmationDelay) { [weak self] in
            self?.assumeIsolated { run in
                run.confirmingGone = false
                guard run.completion != nil, run.exitWatches.isEmpty else { return }
                let withinGrace = run.nextStep < run.steps.count
                if run.target.isGone && !(withinGrace && run.escapersAppeared) {
                    run.finish()
                } else {
                    run.awaitMembersExit()
                }
            }
        }
    }

    private func cancelExitWatches() {
        for (pidfd, watch) in exitWatches { watch.cancel { close(pidfd) } }
        exitWatches = [:]
    }

    private func finish() {
        cancelExitWatches()
        timer?.cancel()
        timer = nil
        nextStep = steps.count
        guard let completion else { return }
        self.completion = nil
        completion()
    }
}
