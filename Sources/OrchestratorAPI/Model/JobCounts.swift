/// How many jobs are in each state.
public struct JobCounts: Codable, Sendable, Hashable {
    /// Jobs not yet eligible (dependencies or start time).
    public var waiting: Int
    /// Eligible jobs waiting for a slot.
    public var queued: Int
    /// Jobs whose process runs.
    public var running: Int
    /// Jobs that ended.
    public var finished: Int

    /// Creates a value with every field given.
    public init(waiting: Int = 0, queued: Int = 0, running: Int = 0, finished: Int = 0) {
        self.waiting = waiting
        self.queued = queued
        self.running = running
        self.finished = finished
    }

    /// Adds `delta` to the count of `state`'s name.
    public mutating func add(_ delta: Int, to state: JobState) {
        switch state {
        case .waiting: waiting += delta
        case .queued: queued += delta
        case .running: running += delta
        case .finished: finished += delta
        }
    }

    /// Jobs not finished.
    public var live: Int { waiting + queued + running }
}
