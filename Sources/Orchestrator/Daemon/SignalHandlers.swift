import Dispatch
import Glibc

/// The daemon's signal handlers, a service of the running daemon: SIGTERM and SIGINT (stop:
/// drain, shut the scheduler down, make everything durable, then `stopped`), SIGHUP (reload)
/// and, for tests, SIGUSR1 (wedge the control queue). `io.orchd.Manager.Shutdown` begins the
/// same stop through ``requestStop``.
///
/// The signals are blocked in every thread (``Daemon/prepareSignals(arguments:)``), so they
/// arrive only as dispatch sources on one queue, and no work runs in a signal handler.
final class SignalHandlers {
    private let queue = DispatchQueue(label: "orchd.signals")
    private let scheduler: Scheduler
    private let statusReporter: StatusReporter
    private let notifier: SystemdNotifier
    private let current: LockedBox<DaemonConfiguration>
    private let blockOnSIGUSR1: Bool
    private let stopped: @Sendable () -> Void
    private var sources: [any DispatchSourceSignal] = []
    /// Whether ``start()`` has run, and the reason of a stop requested before it.
    private let requests = LockedBox<(started: Bool, pending: String?)>((false, nil))

    /// Begins the stop a signal begins, for `reason` (logged: `<reason>, stopping`), from any
    /// thread: for `io.orchd.Manager.Shutdown`, whose log must not name a signal that never
    /// came. A request before ``start()`` waits for it, as a signal stays pending until then.
    var requestStop: @Sendable (_ reason: String) -> Void {
        let (queue, requests, beginStop) = (queue, requests, beginStop)
        return { reason in
            let held = requests.withLock { state -> Bool in
                guard !state.started else { return false }
                if state.pending == nil { state.pending = reason }
                return true
            }
            if !held { queue.async { beginStop(reason) } }
        }
    }

    /// - Parameters:
    ///   - scheduler: drained and shut down at SIGTERM/SIGINT, reconfigured at SIGHUP.
    ///   - statusReporter: knows whether the daemon is already stopping.
    ///   - notifier: sends `STOPPING=1` and the reload's messages.
    ///   - current: the settings in force; a reload replaces them.
    ///   - blockOnSIGUSR1: `--test-block-control-queue-on-sigusr1`.
    ///   - stopped: called once the stop is durable.
    init(
        scheduler: Scheduler, statusReporter: StatusReporter, notifier: SystemdNotifier,
        current: LockedBox<DaemonConfiguration>, blockOnSIGUSR1: Bool, stopped: @escaping @Sendable () -> Void
    ) {
        self.scheduler = scheduler
        self.statusReporter = statusReporter
        self.notifier = notifier
        self.current = current
        self.blockOnSIGUSR1 = blockOnSIGUSR1
        self.stopped = stopped
    }

    /// Installs the handlers, and begins a stop requested before.
    func start() {
        let beginStop = beginStop
        for signal in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
            source.setEventHandler { beginStop("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT")") }
            source.resume()
            sources.append(source)
        }
        let pending = requests.withLock { state -> String? in
            state.started = true
            return state.pending
        }
        if let pending { queue.async { beginStop(pending) } }
        let (scheduler, statusReporter, notifier, current) = (scheduler, statusReporter, notifier, current)
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: queue)
        hangup.setEventHandler {
            guard !statusReporter.isStopping else {
                DaemonLog.info("received SIGHUP while stopping: not reloading")
                return
            }
            Daemon.reload(current: current, scheduler: scheduler, notifier: notifier)
        }
        hangup.resume()
        sources.append(hangup)
        if blockOnSIGUSR1 {
            // Test-only (--test-block-control-queue-on-sigusr1): wedge the scheduler, so that
            // tests can see the watchdog withhold its pings.
            let block = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: queue)
            block.setEventHandler {
                DaemonLog.warning("received SIGUSR1: blocking the control queue forever (test hook)")
                Task { await scheduler.blockForTests() }
            }
            block.resume()
            sources.append(block)
        }
    }

    /// The stop, begun once whatever asks for it: `STOPPING=1`, the `daemon_stopping` event, the
    /// drain and teardown, a durable flush, the replies handed over, then `stopped`.
    private var beginStop: @Sendable (_ reason: String) -> Void {
        let (scheduler, statusReporter, notifier, current, stopped) = (scheduler, statusReporter, notifier, current, stopped)
        return { reason in
            guard !statusReporter.beginStopping() else {
                DaemonLog.info("\(reason); already stopping")
                return
            }
            DaemonLog.info("\(reason), stopping")
            let drain = current.value.drainTimeout
            let extender = StopTimeoutExtender(
                notifier: notifier, drainTimeout: drain, teardownGrace: current.value.teardownGrace)
            Task {
                notifier.stopping(status: "stopping: " + (await scheduler.statusLine))
                // Before the event's write, which waits out a database that another process
                // holds locked, so that systemd does not kill orchd meanwhile.
                extender.start()
                await scheduler.recordDaemonEvent(.daemonStopping)
                await scheduler.shutdown(drainTimeout: drain)
                // Durable before the server stops: held replies go out first.
                await scheduler.flush()
                await scheduler.requestRepliesHandedOver()
                extender.stop()
                stopped()
            }
        }
    }

    /// Cancels the handlers (at the stop).
    func stop() {
        for source in sources { source.cancel() }
    }
}
