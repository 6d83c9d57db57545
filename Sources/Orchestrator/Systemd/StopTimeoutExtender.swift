import Dispatch
import Synchronization

/// Keeps systemd from killing orchd while it drains after SIGTERM: sends
/// `EXTEND_TIMEOUT_USEC=` (sd_notify(3)) at once and then every half window, until stopped.
/// Each message gives systemd a window within which the next must come, so a drain that
/// hangs still ends in systemd's SIGKILL.
final class StopTimeoutExtender: Sendable {
    private let notifier: SystemdNotifier
    /// The window each message grants: what is left of the drain and teardown, at most 10 s.
    private let window: Duration
    private let timer = Mutex<RetainedSource<any DispatchSourceTimer>?>(nil)

    /// - Parameters:
    ///   - drainTimeout: how long jobs may finish by themselves.
    ///   - teardownGrace: the SIGTERM-to-SIGKILL grace that follows.
    init(notifier: SystemdNotifier, drainTimeout: Duration, teardownGrace: Duration) {
        self.notifier = notifier
        self.window = min(drainTimeout + teardownGrace + .seconds(5), .seconds(10))
    }

    /// Sends the first extension and starts the timer.
    func start() {
        let message = "EXTEND_TIMEOUT_USEC=\(window.microseconds)"
        notifier.send(message)
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "orchd.stop-timeout"))
        source.schedule(deadline: .now() + (window / 2).dispatchInterval, repeating: (window / 2).dispatchInterval)
        source.setEventHandler { [notifier] in notifier.send(message) }
        timer.withLock { $0 = RetainedSource(source: source) }
        source.activate()
    }

    /// Stops sending: the drain is over.
    func stop() {
        timer.withLock { $0?.source.cancel(); $0 = nil }
    }
}
