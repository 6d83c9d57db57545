/// When a committed change is made durable against power loss, and so when a reply that
/// reports it may go out (`orchd --sync`, configuration key `sync`).
///
/// Either way every change is committed (WAL, `synchronous=NORMAL`) before anyone is told,
/// and a commit survives a crash of orchd (<https://www.sqlite.org/pragma.html#pragma_synchronous>);
/// the policies differ only in what a power loss or kernel crash may take.
public enum SyncPolicy: Sendable, Equatable {
    /// A reply that reports a change waits for the group-commit barrier's fsync: whatever
    /// was acknowledged survives a power loss. The default.
    case always
    /// A reply goes out once the change is committed; a timer-driven barrier makes it durable
    /// against power loss within this interval (a power loss may lose the acknowledged
    /// changes of the last interval; a crash of orchd loses nothing).
    case interval(Duration)

    /// The name shown by `orchctl info` and accepted by `--sync`: `always` or `interval`.
    public var name: String {
        switch self {
        case .always: "always"
        case .interval: "interval"
        }
    }

    /// The interval of ``interval(_:)``, in microseconds; `nil` for ``always``.
    public var intervalUSec: Int64? {
        guard case .interval(let span) = self else { return nil }
        return span.microseconds
    }

    /// The default `--sync-interval`: 100 ms.
    public static let defaultInterval: Duration = .milliseconds(100)
}
