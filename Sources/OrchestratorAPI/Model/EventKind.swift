/// What an ``Event`` records: the one typed name for each kind, shared by the daemon's
/// observers, hooks and journal lines and by `orchctl events`.
///
/// The raw value is the snake_case name stored in the event log's `kind` column (the
/// database triggers write it for job changes) and sent on the wire. An open set, like a
/// notification name: a kind this build does not know (from a newer daemon) still decodes
/// and prints, it just matches none of the constants.
public struct EventKind: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The stored and wire name, e.g. `queue_drained`.
    public var rawValue: String

    /// Creates a kind from its stored or wire name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    /// A job was stored.
    public static let submitted: EventKind = "submitted"
    /// A waiting job became eligible to run.
    public static let queued: EventKind = "queued"
    /// An attempt was claimed to run.
    public static let started: EventKind = "started"
    /// An attempt ended unsuccessfully and the job waits for its next attempt.
    public static let retrying: EventKind = "retrying"
    /// A job went back to queued or waiting (`orchctl retry`, a claim given back at a stop).
    public static let requeued: EventKind = "requeued"
    /// A job finished, with any result but `cancelled`.
    public static let finished: EventKind = "finished"
    /// A job finished with result `cancelled`.
    public static let cancelled: EventKind = "cancelled"
    /// A queue was paused.
    public static let queuePaused: EventKind = "queue_paused"
    /// A queue was resumed.
    public static let queueResumed: EventKind = "queue_resumed"
    /// A queue's last waiting, queued or running job ended.
    public static let queueDrained: EventKind = "queue_drained"
    /// The daemon is ready.
    public static let daemonReady: EventKind = "daemon_ready"
    /// The daemon is stopping.
    public static let daemonStopping: EventKind = "daemon_stopping"

    /// Every kind this build writes, in the order of a job's life, then queues, then the daemon.
    public static let known: [EventKind] = [
        .submitted, .queued, .started, .retrying, .requeued, .finished, .cancelled,
        .queuePaused, .queueResumed, .queueDrained, .daemonReady, .daemonStopping,
    ]
}
