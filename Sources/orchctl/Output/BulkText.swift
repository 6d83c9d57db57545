import OrchestratorAPI

/// What a command on many jobs at once did, in one line.
enum BulkText {
    /// `cancelled 3 jobs: 4 5 9`, or `cancelled no jobs`.
    /// - Parameters:
    ///   - ids: the jobs changed.
    ///   - verb: what was done to them.
    static func summary(_ ids: [JobID], verb: String) -> String {
        guard !ids.isEmpty else { return "\(verb) no jobs" }
        return "\(verb) \(ids.count) job\(ids.count == 1 ? "" : "s"): " + ids.map(\.description).joined(separator: " ")
    }
}
