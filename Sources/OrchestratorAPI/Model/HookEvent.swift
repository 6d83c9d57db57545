/// The events a queue hook can be set for (`orchctl queue set Q --on EVENT=COMMAND`), and the
/// one table of which job results fire which of them.
///
/// README's Hooks paragraph and `orchctl help queue set` describe this table; the daemon's
/// hook runner and orchctl's option check both read it, so they cannot disagree.
public enum HookEvent: String, CaseIterable, Sendable {
    /// A job's attempt started (its process was spawned).
    case started
    /// An attempt ended unsuccessfully and the job waits for its next attempt.
    case retrying
    /// The job finished, whatever its result (cancelled included).
    case finished
    /// The job finished with result `succeeded`.
    case succeeded
    /// The job finished unsuccessfully for any reason but a cancel.
    case failed
    /// The job was cancelled, before it started or while it ran.
    case cancelled
    /// The queue has no waiting, queued or running job left.
    case queueDrained = "queue_drained"

    /// The job results (``JobResult/name``) whose final finish fires this event; empty for
    /// events that are not about a finish.
    public var results: [String] {
        switch self {
        case .finished: ["succeeded", "failed", "signaled", "timed_out", "cancelled", "spawn_failed", "dependency_failed", "interrupted"]
        case .succeeded: ["succeeded"]
        case .failed: ["failed", "signaled", "timed_out", "spawn_failed", "dependency_failed", "interrupted"]
        case .cancelled: ["cancelled"]
        case .started, .retrying, .queueDrained: []
        }
    }

    /// The hook events a job's final finish with `result` fires, in the order they run.
    public static func fired(byFinishWith result: String) -> [HookEvent] {
        allCases.filter { $0.results.contains(result) }
    }

    /// The hook events that an event-log event (``Event/kind``) fires.
    /// - Parameters:
    ///   - kind: the event's kind (`started`, `retrying`, `finished`, `cancelled`,
    ///     `queue_drained`; other kinds fire nothing).
    ///   - result: the event's result, for `finished` and `cancelled`.
    public static func fired(byEventKind kind: EventKind, result: String?) -> [HookEvent] {
        switch kind {
        case .finished, .cancelled: result.map(fired(byFinishWith:)) ?? []
        case .started: [.started]
        case .retrying: [.retrying]
        case .queueDrained: [.queueDrained]
        default: []
        }
    }

    /// One line per event for help text: `failed: failed, signaled, ...`.
    public static var helpLines: [String] {
        allCases.map { event in
            let when = switch event {
            case .started: "an attempt started (its process was spawned, or Slurm took the job)"
            case .retrying: "an attempt ended unsuccessfully and another will run"
            case .queueDrained: "the queue has no waiting, queued or running job left"
            case .finished: "any final result, cancelled included"
            case .failed: "every unsuccessful final result but cancelled: " + event.results.joined(separator: ", ")
            default: "result " + event.results.joined(separator: ", ")
            }
            return "\(event.rawValue): \(when)"
        }
    }
}
