import Foundation
import OrchestratorAPI

// MARK: - Pruning finished jobs

extension JobStore {
    /// A finished job that may be pruned, oldest first, for ``JobStateMachine`` to decide on.
    public struct PruneCandidate: Sendable {
        public var id: JobID
        public var queue: QueueName
        /// Its state (always finished; the query selects nothing else).
        public var state: JobState
        /// When it finished, in microseconds since the Unix epoch (the walk's cursor).
        public var finishedAt: Int64
        /// A job that has not finished depends on it.
        public var hasLiveDependents: Bool
        /// Who submitted it: its log files are under that user's directory.
        public var owner: UInt32
        /// Attempts it started, a pair of log files each.
        public var attempts: Int
    }

    /// Whether a job that has not finished depends on `jobs.id`.
    private static let hasLiveDependentsSQL = """
        EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs c ON c.id = d.job_id \
        WHERE d.depends_on = jobs.id AND c.state <> 'finished')
        """

    /// Finished jobs in the order they finished, a page at a time along the index
    /// `jobs_finished`, so a walk costs the pages read, not a scan of the table. The index is
    /// named in the query: without statistics SQLite prefers `jobs_by_state`, which read and
    /// sorted every finished job for each page.
    /// - Parameters:
    ///   - finishedBefore: only jobs finished before this time; `nil` for any.
    ///   - after: continue after this candidate (the last of the previous page); `nil` to start.
    ///   - limit: at most this many.
    /// - Returns: the candidates, oldest finish first (ties by ID).
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func finishedJobs(finishedBefore: Date?, after: PruneCandidate?, limit: Int) throws -> [PruneCandidate] {
        try database.read { db in
            let statement = try db.cachedStatement("""
                SELECT id, queue, finished_at, \(Self.hasLiveDependentsSQL), state, result, exit_code, signal, reason, \
                failed_dependency, submitter_uid, attempt FROM jobs INDEXED BY jobs_finished \
                WHERE state = 'finished' AND finished_at < ?1 AND (finished_at, id) > (?2, ?3) \
                ORDER BY finished_at, id LIMIT ?4
                """)
            defer { statement.reset() }
            try statement.bind([
                .integer(finishedBefore.map(Timestamp.microseconds) ?? .max), .integer(after?.finishedAt ?? .min),
                .integer(after?.id.rawValue ?? .min), .integer(Int64(max(0, limit))),
            ])
            var candidates: [PruneCandidate] = []
            while try statement.step() {
                let id = JobID(rawValue: statement.int64(at: 0))
                candidates.append(PruneCandidate(
                    id: id, queue: QueueName(rawValue: statement.string(at: 1) ?? "") ?? .default,
                    state: try Self.state(statement, at: 4, id: id), finishedAt: statement.int64(at: 2), hasLiveDependents: statement.int64(at: 3) != 0,
                    owner: UInt32(truncatingIfNeeded: statement.int64(at: 10)), attempts: statement.int(at: 11)))
            }
            return candidates
        }
    }

    /// Deletes finished jobs with their attempts, and the environments no job refers to any
    /// more, in one transaction. The rows naming them as
    /// a dependency stay, so a dependent still knows what it waited for (and `retry` can
    /// tell that a dependency was pruned).
    /// - Parameter ids: the jobs (``JobStateMachine`` decided); one not finished, or one a
    ///   job not yet finished depends on, is kept.
    /// - Returns: the deleted jobs' IDs, queues, owners and attempts started (their log files,
    ///   one pair per attempt, are the caller's to remove).
    /// - Throws: ``DatabaseError``.
    public func deleteFinished(_ ids: [JobID]) throws -> [(id: JobID, queue: QueueName, owner: UInt32, attempts: Int)] {
        guard !ids.isEmpty else { return [] }
        return try database.write { db in
            let statement = try db.cachedStatement("""
                DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'finished' \
                AND NOT \(Self.hasLiveDependentsSQL) RETURNING id, queue, environment_id, submitter_uid, attempt
                """)
            defer { statement.reset() }
            try statement.bind([.text(Self.jsonArray(ids))])
            var deleted: [(id: JobID, queue: QueueName, owner: UInt32, attempts: Int)] = []
            var environments: Set<Int64> = []
            while try statement.step() {
                deleted.append((
                    JobID(rawValue: statement.int64(at: 0)), QueueName(rawValue: statement.string(at: 1) ?? "") ?? .default,
                    UInt32(truncatingIfNeeded: statement.int64(at: 3)), statement.int(at: 4)))
                environments.insert(statement.int64(at: 2))
            }
            statement.reset()
            // Their environments go with the last job that refers to them.
            try deleteUnreferencedEnvironments(environments, in: db)
            return deleted
        }
    }

    /// When the job that finished first among those no live job depends on finished: the
    /// next job an age limit would prune.
    /// - Returns: that time, or `nil` when there is no such job.
    /// - Throws: ``DatabaseError``.
    public func earliestPrunableFinish() throws -> Date? {
        try database.read { db in
            // ORDER BY ... LIMIT 1 walks jobs_finished, named as in finishedJobs, and stops at
            // the first match; min() with this condition would read every finished job.
            let statement = try db.cachedStatement("""
                SELECT finished_at FROM jobs INDEXED BY jobs_finished WHERE state = 'finished' AND NOT \(Self.hasLiveDependentsSQL) \
                ORDER BY finished_at LIMIT 1
                """)
            defer { statement.reset() }
            guard try statement.step(), !statement.isNull(at: 0) else { return nil }
            return Timestamp.date(microseconds: statement.int64(at: 0))
        }
    }
}
