import Dispatch
import Glibc

/// The daemon's signal handlers, a service of the running daemon: SIGTERM and SIGINT (stop:
/// drain, shut the scheduler down, make everything durable, then `stopped`), SIGHUP (reload)
/// and, for tests, SIGUSR1 (wedge the control queue).
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

    /// Installs the handlers.
    func start() {
        let (scheduler, statusReporter, notifier, current, stopped) = (scheduler, statusReporter, notifier, current, stopped)
        for signal in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
            source.setEventHandler {
                guard !statusReporter.beginStopping() else { return }
                DaemonLog.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                let drain = current.value.drainTimeout
                let extender = StopTimeoutExtender(
                    notifier: notifier, drainTimeout: drain, teardownGrace: current.value.teardownGrace)
                Task {
                    notifier.stopping(status: "stopping: " + (await scheduler.statusLine))
                    await scheduler.recordDaemonEvent(.daemonStopping)
                    extender.start()
                    await scheduler.shutdown(drainTimeout: drain)
                    // Durable before the server stops: held replies go out first.
                    await scheduler.flush()
                    await scheduler.requestRepliesHandedOver()
                    extender.stop()
                    stopped()
                }
            }
            source.resume()
            sources.append(source)
        }
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

    /// Cancels the handlers (at the stop).
    func stop() {
        for source in sources { source.cancel() }
    }
}
