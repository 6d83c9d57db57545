import Dispatch
import Foundation
import OrchestratorAPI
import Synchronization

/// Keeps systemd's `STATUS=` line current ("2 running, 5 queued, 10 finished"), at most about
/// five times a second however fast jobs change, and stops updating once the daemon stops.
final class StatusReporter: JobObserver {
    private let scheduler: Scheduler
    private let notifier: SystemdNotifier
    private struct State {
        var updatePending = false
        var stopping = false
    }
    private let state = Mutex(State())
    /// The shortest interval between two status updates.
    private let interval: DispatchTimeInterval = .milliseconds(200)
    /// Where the coalescing delay runs out.
    private let timers = DispatchQueue(label: "orchd.status")

    init(scheduler: Scheduler, notifier: SystemdNotifier) {
        self.scheduler = scheduler
        self.notifier = notifier
    }

    /// Marks the daemon as stopping.
    /// - Returns: whether it was already stopping (a second SIGTERM changes nothing).
    func beginStopping() -> Bool {
        state.withLock { state in
            defer { state.stopping = true }
            return state.stopping
        }
    }

    /// Whether the daemon has begun stopping (a reload is then ignored).
    var isStopping: Bool {
        state.withLock { $0.stopping }
    }

    func eventRecorded(_ event: Event) {
        let schedule = state.withLock { state -> Bool in
            guard !state.updatePending, !state.stopping else { return false }
            state.updatePending = true
            return true
        }
        guard schedule else { return }
        timers.asyncAfter(deadline: .now() + interval) { [self] in
            Task {
                let line = await scheduler.statusLine
                let send = state.withLock { state -> Bool in
                    state.updatePending = false
                    return !state.stopping
                }
                if send { notifier.status(line) }
            }
        }
    }
}
