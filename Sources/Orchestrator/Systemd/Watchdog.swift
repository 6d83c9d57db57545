import CSystemd
import Dispatch
import Glibc
import OrchestratorAPI
import Synchronization

/// Keeps systemd's watchdog fed (`WatchdogSec=`), but only while the scheduler's control
/// queue still runs work: a stuck scheduler stops the pings, so systemd kills and restarts
/// the daemon.
///
/// Every half interval a timer tick checks that the probe the previous tick posted onto the
/// control queue has run; only then does it send `WATCHDOG=1` (sd_notify(3)) and post the
/// next probe. A probe still waiting means the control queue was busy or blocked for the
/// whole half interval, and the ping is withheld (and `STATUS=` says so, see
/// ``stuckStatus``). Probes never pile up: a new one is posted only after the previous one ran.
final class Watchdog: Sendable {
    /// Half of `WATCHDOG_USEC`: the period of the ticks, as sd_watchdog_enabled(3) advises.
    let tickInterval: Duration
    /// The `STATUS=` text sent when a ping is first withheld.
    static let stuckStatus = "the scheduler is not responding; watchdog pings withheld"
    private let scheduler: Scheduler
    private let notifier: SystemdNotifier
    private let timer: RetainedSource<any DispatchSourceTimer>
    private struct Probe {
        /// The number of the probe last posted onto the control queue.
        var posted = 0
        /// The number of the probe that last ran there.
        var answered = 0
        /// Whether the missing answer was already logged.
        var reportedStuck = false
    }
    private let probe = Mutex(Probe())

    /// Creates a watchdog when the service manager asked for one: `$WATCHDOG_USEC` is set,
    /// and `$WATCHDOG_PID`, when set, is this process (sd_watchdog_enabled(3)).
    /// - Parameters:
    ///   - scheduler: its control queue's liveness is what the pings vouch for.
    ///   - notifier: sends `WATCHDOG=1`.
    /// - Returns: `nil` when no watchdog is wanted.
    init?(scheduler: Scheduler, notifier: SystemdNotifier) {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        tickInterval = Duration(microseconds: Int64(clamping: microseconds / 2))
        self.scheduler = scheduler
        self.notifier = notifier
        timer = RetainedSource(source: DispatchSource.makeTimerSource(queue: DispatchQueue(label: "orchd.watchdog")))
    }

    /// Sends the first `WATCHDOG=1` and starts the ticks. Call once the daemon is ready.
    func start() {
        timer.source.setEventHandler { [self] in tick() }
        // A leeway of 1/20 of the period, 1 to 100 ms: the ping may come a little late, never
        // so late that it misses the watchdog's deadline.
        let leeway = min(.milliseconds(100), max(.milliseconds(1), tickInterval / 20))
        timer.source.schedule(deadline: .now() + tickInterval.dispatchInterval, repeating: tickInterval.dispatchInterval, leeway: leeway.dispatchInterval)
        notifier.send("WATCHDOG=1")
        postProbe()
        timer.source.resume()
    }

    /// Stops the ticks (at exit).
    func stop() {
        timer.source.cancel()
    }

    private func tick() {
        let alive = probe.withLock { probe -> Bool in
            guard probe.answered == probe.posted else {
                defer { probe.reportedStuck = true }
                if !probe.reportedStuck {
                    DaemonLog.error("the control queue has not answered for \(TimeSpan.format(tickInterval)); withholding watchdog pings")
                    notifier.status(Self.stuckStatus)
                }
                return false
            }
            return true
        }
        guard alive else { return }
        notifier.send("WATCHDOG=1")
        postProbe()
    }

    private func postProbe() {
        let number = probe.withLock { probe -> Int in
            probe.posted += 1
            return probe.posted
        }
        Task { [self] in
            let status = await scheduler.statusLine
            let recovered = probe.withLock { probe -> Bool in
                probe.answered = number
                defer { probe.reportedStuck = false }
                return probe.reportedStuck
            }
            if recovered {
                DaemonLog.warning("the control queue answers again; watchdog pings resume")
                notifier.status(status)
            }
        }
    }
}
