import Foundation
import OrchestratorAPI

// MARK: - The scheduler's hot path: transitions that happen together, in one transaction

extension JobStore {
    /// The IDs of the next queued jobs of a queue, in start order; served by the partial
    /// index `jobs_runnable` (no table scan, no sort).
    static let claimCandidatesSQL = """
        SELECT id FROM jobs WHERE state = 'queued' AND queue = ?1 \
        AND id NOT IN (SELECT value FROM json_each(?2)) ORDER BY priority DESC, id LIMIT ?3
        """

    /// Claims the next queued jobs of a queue for a start, in one transaction: the candidates
    /// in start order (priority, then ID), each claimed that `admit` lets through, as
    /// ``claim(_:at:)`` does. Only the claimed rows are decoded (from `RETURNING`).
    /// - Parameters:
    ///   - queue: the queue.
    ///   - excluding: jobs not to consider (operations of this daemon in flight).
    ///   - limit: claim at most this many (the queue's free slots).
    ///   - at: the start time recorded.
    ///   - admit: whether a candidate may be claimed (the job state machine's decision).
    /// - Returns: the claimed jobs, `running`, in start order.
    /// - Throws: a ``DatabaseError``; then nothing was claimed.
    public func claimNext(
        in queue: QueueName, excluding: Set<JobID>, limit: Int, at: Date, admit: (JobID) -> Bool
    ) throws -> [Job] {
        guard limit > 0 else { return [] }
        return try database.write { db in
            var candidates: [JobID] = []
            do {
                let statement = try db.cachedStatement(Self.claimCandidatesSQL)
                defer { statement.reset() }
                try statement.bind([.text(queue.rawValue), .text(Self.jsonArray(excluding.sorted())), .integer(Int64(limit))])
                while try statement.step() { candidates.append(JobID(rawValue: statement.int64(at: 0))) }
            }
            return try candidates.filter(admit).map { try claim($0, at: at) }
        }
    }
}
