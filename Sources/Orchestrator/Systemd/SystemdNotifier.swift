import CSystemd
import Glibc

/// Reports the daemon's state to its service manager with sd_notify(3).
///
/// Without `$NOTIFY_SOCKET` (not started by systemd) every call is a cheap no-op, which
/// sd_notify itself guarantees. The variable is left in the daemon's environment (jobs never
/// inherit it: their environment is the submitter's).
public struct SystemdNotifier: Sendable {
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
    }

    /// Sends raw `KEY=VALUE` lines.
    /// - Returns: whether a message was sent (false without `$NOTIFY_SOCKET` or on error).
    @discardableResult
    public func send(_ state: String) -> Bool {
        // Newlines inside a value would start a new assignment.
        sd_notify(0, state) > 0
    }
}
