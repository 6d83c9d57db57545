import CPosix
import Dispatch
import Glibc
import Synchronization

/// A job's process while orchd starts it: its pid as the kernel stores it when it creates
/// the child (`CLONE_PARENT_SETTID`), before the child has exec'd and before the spawn
/// returns, so that it can be killed meanwhile.
///
/// The spawning thread waits in clone3(2) until the child execs (`CLONE_VFORK`). A child that
/// runs as another user is that user's from the moment it drops to their uid, so the user may
/// stop it (SIGSTOP) before its exec: the thread then waited for ever, and with it a cancel of
/// the job, a timeout, and orchd's stop. A stop of the job kills the child here instead
/// (``kill()``), and while a child that runs as another user is being started, a watch kills
/// it should it be found stopped (``watchForStop(every:)``).
final class SpawningChild: @unchecked Sendable { // safe: `pid` is written by the kernel and by the spawning thread, and read, only through atomic loads and stores (cposix_load_pid, cposix_store_pid); the rest is behind `watch`'s lock
    /// Where the kernel stores the pid; 0 before the clone and again once the spawn returned.
    let pid: UnsafeMutablePointer<pid_t>
    private let watch = Mutex<(timer: DispatchSourceTimer?, killedStopped: Bool)>((nil, false))

    init() {
        pid = .allocate(capacity: 1)
        pid.initialize(to: 0)
    }

    deinit {
        pid.deallocate()
    }

    /// The child's pid while it is being started; `nil` before and after.
    var current: pid_t? {
        let value = cposix_load_pid(pid)
        return value > 0 ? value : nil
    }

    /// Kills the child being started (SIGKILL), if there is one: nothing of the job has run
    /// yet, or only for the moment between its exec and the spawn's return. Its spawn then
    /// returns, and the job ends as its stop says.
    func kill() {
        guard let child = current else { return }
        _ = Glibc.kill(child, SIGKILL)
    }

    /// Until ``finished()``, looks at the child every `interval` and kills it if it is stopped
    /// (`T` or `t` in `/proc/PID/stat`): only a signal its user sent, or a tracer, can stop it
    /// before its exec. A timer, as no event says a child stopped: its pidfd reports only its
    /// exit, and orchd takes no SIGCHLD. Only spawns as another user are watched.
    func watchForStop(every interval: DispatchTimeInterval = .seconds(1)) {
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in
            guard let child = current, let state = ProcStat.fields(pid: child)?.first, state == "T" || state == "t" else { return }
            watch.withLock { $0.killedStopped = true }
            _ = Glibc.kill(child, SIGKILL)
        }
        watch.withLock { $0.timer = timer }
        timer.activate()
    }

    /// The spawn has returned: nothing more to kill.
    /// - Returns: whether the watch killed the child for being stopped.
    func finished() -> Bool {
        cposix_store_pid(pid, 0)
        return watch.withLock { state in
            state.timer?.cancel()
            state.timer = nil
            return state.killedStopped
        }
    }
}
