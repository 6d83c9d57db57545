import Foundation
import OrchestratorAPI

// MARK: - The scheduler's hot path: transitions that happen together, in one transaction

extension JobStore {
    /// The IDs of the next queued jobs of a queue, in start order; served by the partial
    /// index `jobs_runnable` (no table scan, no sort).
    static let claimCandidatesSQL = """
        SELECT id FROM jobs WHERE state = 'queued' AND queue = ?1 AND held = 0 \
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

extension JobStore {
    /// Records the identity of a claimed job's process, to recognise it after a restart,
    /// without reading the row back: the scheduler already holds it and sets the pid itself.
    /// - Parameters:
    ///   - id: the job; it must be running.
    ///   - pid: the main process ID (also its process group ID).
    ///   - processStartTicks: its start time in clock ticks after boot (`/proc/PID/stat` field 22).
    ///   - bootID: the current boot's ID (`/proc/sys/kernel/random/boot_id`).
    /// - Throws: ``JobStoreError/invalidTransition(_:from:to:)`` when the job is not running
    ///   (``JobStoreError/noSuchJob(_:)`` when it is gone), or a ``DatabaseError``.
    public func recordProcessOnly(_ id: JobID, pid: Int32, processStartTicks: UInt64, bootID: String) throws {
        try database.write { db in
            let statement = try db.cachedStatement(
                "UPDATE jobs SET pid = ?2, process_start_ticks = ?3, boot_id = ?4 WHERE id = ?1 AND state = 'running'")
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue), .integer(Int64(pid)), .integer(Int64(bitPattern: processStartTicks)), .text(bootID)])
            try statement.step()
            guard db.changes == 0 else { return }
            guard let job = try self.job(id) else { throw JobStoreError.noSuchJob(id) }
            throw JobStoreError.invalidTransition(id, from: job.state.name, to: "running")
        }
    }
}
