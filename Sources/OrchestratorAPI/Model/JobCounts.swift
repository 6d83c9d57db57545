/// How many jobs are in each state.
public struct JobCounts: Codable, Sendable, Hashable {
    public var waiting: Int
    public var queued: Int
    public var running: Int
    public var finished: Int

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
