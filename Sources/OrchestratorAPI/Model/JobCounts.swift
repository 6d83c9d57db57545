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

    /// Reads `{"waiting": N, "queued": N, "running": N, "finished": N}` as the `Decodable`
    /// conformance does (other members skipped), or gives up (`nil`) on anything else.
    public static func read(_ reader: inout JSONByteReader) -> JobCounts? {
        var waiting: Int64?, queued: Int64?, running: Int64?, finished: Int64?
        let ok = reader.object { key, reader in
            switch key {
            case "waiting": return reader.required(&waiting) { $0.integer() }
            case "queued": return reader.required(&queued) { $0.integer() }
            case "running": return reader.required(&running) { $0.integer() }
            case "finished": return reader.required(&finished) { $0.integer() }
            default: return reader.skipValue()
            }
        }
        guard ok, let waiting, let queued, let running, let finished else { return nil }
        return JobCounts(waiting: Int(waiting), queued: Int(queued), running: Int(running), finished: Int(finished))
    }
}
