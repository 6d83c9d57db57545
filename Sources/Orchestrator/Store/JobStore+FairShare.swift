import Foundation
import OrchestratorAPI

// MARK: - Claims shared between users

extension JobStore {
    /// One user's next queued jobs of a queue, in start order.
    public struct OwnerCandidates: Sendable, Equatable {
        /// The user (submitter uid).
        public var owner: UInt32
        /// Their next queued jobs, highest priority first, then oldest.
        public var jobs: [JobID]
    }

    /// The users with queued jobs in a queue, by uid; each found with one probe of the index
    /// `jobs_runnable_by_owner`, never a read of the queue.
    /// - Parameters:
    ///   - queue: the queue.
    ///   - limit: stop after this many users.
    /// - Throws: ``DatabaseError``.
    public func queuedOwners(in queue: QueueName, limit: Int = .max) throws -> [UInt32] {
        try database.read { db in
            let statement = try db.cachedStatement("""
                SELECT submitter_uid FROM jobs WHERE state = 'queued' AND held = 0 AND queue = ?1 AND submitter_uid > ?2 \
                ORDER BY submitter_uid LIMIT 1
                """)
            var owners: [UInt32] = []
            var after: Int64 = -1
            while owners.count < limit {
                statement.reset()
                try statement.bind([.text(queue.rawValue), .integer(after)])
                guard try statement.step() else { break }
                after = statement.int64(at: 0)
                owners.append(UInt32(truncatingIfNeeded: after))
            }
            statement.reset()
            return owners
        }
    }

    /// The IDs of one user's next queued jobs of a queue, in start order; served by the
    /// partial index `jobs_runnable_by_owner`.
    static let ownerCandidatesSQL = """
        SELECT id FROM jobs WHERE state = 'queued' AND held = 0 AND queue = ?1 AND submitter_uid = ?2 \
        ORDER BY priority DESC, id LIMIT ?3
        """

    /// Claims queued jobs of a queue chosen among its users, in one transaction: reads each
    /// user's next `perOwner` jobs, lets `choose` pick from them (round-robin, per-user
    /// limits), and claims each picked job that `admit` lets through, as ``claim(_:at:)``
    /// does.
    /// - Parameters:
    ///   - queue: the queue.
    ///   - excluding: jobs not to consider (operations of this daemon in flight).
    ///   - perOwner: read at most this many of each user's jobs (the queue's free slots).
    ///   - at: the start time recorded.
    ///   - choose: the jobs to claim, in start order, from each user's candidates.
    ///   - admit: whether a candidate may be claimed (the job state machine's decision).
    /// - Returns: the claimed jobs, `running`, in the order chosen.
    /// - Throws: a ``DatabaseError``; then nothing was claimed.
    public func claimShared(
        in queue: QueueName, excluding: Set<JobID>, perOwner: Int, at: Date,
        choose: ([OwnerCandidates]) -> [JobID], admit: (JobID) -> Bool
    ) throws -> [Job] {
        guard perOwner > 0 else { return [] }
        return try database.write { db in
            var candidates: [OwnerCandidates] = []
            let statement = try db.cachedStatement(Self.ownerCandidatesSQL)
            for owner in try queuedOwners(in: queue) {
                let jobs = try Self.candidates(
                    of: statement, [.text(queue.rawValue), .integer(Int64(owner))], limit: perOwner, excluding: excluding)
                if !jobs.isEmpty { candidates.append(OwnerCandidates(owner: owner, jobs: jobs)) }
            }
            return try choose(candidates).filter(admit).map { try claim($0, at: at) }
        }
    }
}
