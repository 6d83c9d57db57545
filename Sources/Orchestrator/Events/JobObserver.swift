import Foundation
import OrchestratorAPI

/// A delegate that hears of every event once it is durable: the one stream observers get
/// (job changes, queue pauses and drains, the daemon's readiness and stop).
public protocol JobObserver: AnyObject, Sendable {
    /// An event was recorded in the event log and is durable. Called in sequence order, on
    /// the scheduler's control queue (isolated to ``Scheduler``), so it must not block.
    func eventRecorded(_ event: Event)

    /// The events of one delivery are all recorded (called after the last
    /// ``eventRecorded(_:)`` of each delivery, on the same queue): an observer that gathers
    /// work across events (``JournalObserver``'s log lines) finishes it here.
    func eventsDelivered()
}

extension JobObserver {
    public func eventsDelivered() {}
}
