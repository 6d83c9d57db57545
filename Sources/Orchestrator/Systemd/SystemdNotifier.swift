import CSystemd
import Dispatch
import Glibc

/// Reports the daemon's state to its service manager with sd_notify(3).
///
/// Without `$NOTIFY_SOCKET` (not started by systemd) every call is a cheap no-op, which
/// sd_notify itself guarantees. The variable is left in the daemon's environment (jobs never
/// inherit it: their environment is the submitter's).
///
/// Messages go out in order on one private queue, never on the caller's: sd_notify's
/// `sendmsg` blocks while the receiver's queue is full, and a service manager that is slow
/// to read must not stall the scheduler.
public struct SystemdNotifier: Sendable {
    private static let queue = DispatchQueue(label: "orchd.sd-notify")

    /// Creates a notifier.
    public init() {}

    /// Sends `READY=1` and a status line: start-up is complete (sd_notify(3)).
    public func ready(status: String) {
        send("READY=1\nSTATUS=\(status)")
    }

    /// Sends `STATUS=`, a one-line human-readable state shown by `systemctl status`.
    public func status(_ text: String) {
        send("STATUS=\(text)")
    }

    /// Sends `STOPPING=1`: shutdown has begun.
    public func stopping(status: String) {
        send("STOPPING=1\nSTATUS=\(status)")
    }

    /// Sends `RELOADING=1` with `MONOTONIC_USEC=` (the current `CLOCK_MONOTONIC` time in
    /// microseconds) in one message: a reload has begun, and `READY=1` follows when it is
    /// done (sd_notify(3); `Type=notify-reload` in systemd.service(5) needs both fields).
    public func reloading(status: String) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
        send("RELOADING=1\nMONOTONIC_USEC=\(microseconds)\nSTATUS=\(status)")
    }

    /// Sends `ERRNO=` with a status line, before exiting on a fatal start-up error.
    /// - Parameter errno: the error number that best describes the failure.
    public func failed(errno: Int32, status: String) {
        send("STATUS=\(status)\nERRNO=\(errno)")
        flush()
    }

    /// Queues raw `KEY=VALUE` lines (newline-separated) for sending, after every message
    /// queued before.
    public func send(_ state: String) {
        Self.queue.async { _ = sd_notify(0, state) }
    }

    /// Waits until every queued message was handed to the socket, or `timeout` ran out
    /// (before the process exits).
    ///
    /// sd_notify's `sendmsg` waits for as long as the receiver's queue is full, and a Unix
    /// datagram socket queues only a limited number of messages (`net.unix.max_dgram_qlen`
    /// and the receive buffer bound it): a receiver that stopped reading must not keep the
    /// daemon from exiting.
    /// - Parameter timeout: the longest wait, in seconds.
    /// - Returns: `false` when messages were still unsent at the timeout.
    @discardableResult
    public func flush(timeout: Double = 5) -> Bool {
        let sent = DispatchSemaphore(value: 0)
        Self.queue.async { sent.signal() }
        return sent.wait(timeout: .now() + timeout) == .success
    }
}
