import Foundation
import OrchestratorAPI

/// A delegate that hears about job lifecycle changes. Every method has a default no-op
/// implementation, so an observer implements only what it cares about (the "optional
/// methods" of a delegate protocol).
public protocol JobObserver: AnyObject, Sendable {
    /// A job changed state. Called after the change is committed to the store.
    /// - Parameters:
    ///   - job: the job as stored after the change.
    ///   - previousState: the state before; `nil` when the job was just submitted.
    ///   - newState: the state now (also `job.state`).
    ///   - result: the result when `newState` is finished, else `nil` (a convenience: it is
    ///     `newState.result`).
    func job(_ job: Job, changedFrom previousState: JobState?, to newState: JobState, result: JobResult?)

    /// Extra environment for a job about to start, merged over the job's own. Observers are
    /// asked in registration order and the last observer that answers (returns
    /// non-`nil`) wins.
    func environment(for job: Job) -> [String: String]?

    /// An event was recorded in the event log and is durable: every job change, queue pauses
    /// and drains, the daemon's readiness and stop. Called in sequence order.
    func eventRecorded(_ event: Event)
}

extension JobObserver {
    public func job(_ job: Job, changedFrom previousState: JobState?, to newState: JobState, result: JobResult?) {}
    public func environment(for job: Job) -> [String: String]? { nil }
    public func eventRecorded(_ event: Event) {}
}
