import Foundation
import OrchestratorAPI

// MARK: - Waiting, retrying and dependencies

extension JobStore {
    /// When a waiting job may be queued: its start time has come and every dependency succeeded.
    private static let promoteCondition = """
        state = 'waiting' AND coalesce(not_before, 0) <= ?1 AND NOT EXISTS (
            SELECT 1 FROM job_dependencies d JOIN jobs p ON p.id = d.depends_on
            WHERE d.job_id = jobs.id AND (p.state <> 'finished' OR p.result <> 'succeeded'))
        """

    /// Moves waiting jobs whose time has come and whose dependencies all succeeded to queued.
    /// - Parameters:
    ///   - now: the current time; jobs with `notBefore` up to it qualify.
    ///   - dependentsOf: only jobs that depend on this job (after it succeeded); `nil` for
    ///     every waiting job whose start time has passed (a timer fired).
    /// - Returns: the jobs now queued.
    /// - Throws: ``DatabaseError``.
    public func promoteWaiting(now: Date, dependentsOf: JobID? = nil) throws -> [Job] {
        var sql = "UPDATE jobs SET state = 'queued' WHERE \(Self.promoteCondition)"
        var values: [DatabaseValue] = [.integer(Timestamp.microseconds(now))]
        if let dependentsOf {
            sql += " AND id IN (SELECT job_id FROM job_dependencies WHERE depends_on = ?2)"
            values.append(.integer(dependentsOf.rawValue))
        } else {
            // Served by the partial index jobs_waiting.
            sql += " AND not_before IS NOT NULL"
        }
        sql += " RETURNING \(Self.columns)"
        return try database.write { _ in try select(sql, values).map(\.job) }
    }

    /// The earliest future start among waiting jobs (delays, `--at`, retry backoff), for the
    /// scheduler's one wake-up timer.
    /// - Parameter after: only starts later than this.
    /// - Returns: that time, or `nil` when no waiting job has one.
    public func nextWakeUp(after: Date) throws -> Date? {
        try database.read { db in
            let statement = try db.cachedStatement(
                "SELECT min(not_before) FROM jobs WHERE state = 'waiting' AND not_before > ?")
            defer { statement.reset() }
            try statement.bind([.integer(Timestamp.microseconds(after))])
            guard try statement.step(), !statement.isNull(at: 0) else { return nil }
            return Timestamp.date(microseconds: statement.int64(at: 0))
        }
    }

    /// The waiting jobs that depend on `id`, for failing them when it did not succeed.
    public func waitingDependents(of id: JobID) throws -> [JobID] {
        try database.read { db in
            let statement = try db.cachedStatement("""
                SELECT d.job_id FROM job_dependencies d JOIN jobs j ON j.id = d.job_id \
                WHERE d.depends_on = ? AND j.state = 'waiting' ORDER BY d.job_id
                """)
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue)])
            var ids: [JobID] = []
            while try statement.step() { ids.append(JobID(rawValue: statement.int64(at: 0))) }
            return ids
        }
    }

    /// The live job holding a unique key, if any.
    public func liveJob(uniqueKey: String) throws -> Job? {
        try select(
            "SELECT \(Self.columns) FROM jobs WHERE unique_key = ? AND state <> 'finished'", [.text(uniqueKey)]
        ).first?.job
    }

    /// Records the end of a running attempt that will be retried: the attempt is stored with
    /// its result, and the job waits until `retryAt`.
    /// - Returns: the job as now stored (state waiting).
    /// - Throws: ``JobStoreError`` when the job is not running, or ``DatabaseError``.
    @discardableResult
    public func markRetrying(_ id: JobID, result: JobResult, retryAt: Date, at: Date) throws -> Job {
        try database.write { db in
            try recordAttempt(id, result: result, at: at, in: db)
            return try transition(id, to: "waiting", sql: """
                UPDATE jobs SET state = 'waiting', not_before = ?2, pid = NULL, process_start_ticks = NULL, \
                boot_id = NULL WHERE id = ?1 AND state = 'running' RETURNING \(Self.columns)
                """, values: [.integer(id.rawValue), .integer(Timestamp.microseconds(retryAt))])
        }
    }

    /// Puts a finished job back in line for one more attempt (`orchctl retry`): same ID,
    /// the attempt count goes on, and one more attempt is allowed.
    /// - Returns: the job as now stored (queued).
    /// - Throws: ``JobStoreError/invalidTransition(_:from:to:)`` when it is not finished.
    @discardableResult
    public func markRequeued(_ id: JobID) throws -> Job {
        try transition(id, to: "queued", sql: """
            UPDATE jobs SET state = 'queued', result = NULL, exit_code = NULL, signal = NULL, reason = NULL, \
            failed_dependency = NULL, finished_at = NULL, not_before = NULL, max_attempts = attempt + 1 \
            WHERE id = ?1 AND state = 'finished' RETURNING \(Self.columns)
            """, values: [.integer(id.rawValue)])
    }

    /// Every recorded attempt of a job, oldest first.
    public func attempts(of id: JobID) throws -> [JobAttempt] {
        try database.read { db in
            let statement = try db.cachedStatement("""
                SELECT attempt, started_at, finished_at, result, exit_code, signal, reason \
                FROM job_attempts WHERE job_id = ? ORDER BY attempt
                """)
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue)])
            var attempts: [JobAttempt] = []
            while try statement.step() {
                let name = statement.string(at: 3) ?? ""
                guard let result = JobResult(
                    name: name, exitCode: statement.isNull(at: 4) ? nil : Int32(truncatingIfNeeded: statement.int64(at: 4)),
                    signal: statement.isNull(at: 5) ? nil : Int32(truncatingIfNeeded: statement.int64(at: 5)),
                    reason: statement.string(at: 6), failedDependency: nil)
                else {
                    throw JobStoreError.invalidRow(id: id.rawValue, column: "job_attempts.result", detail: "'\(name)' is not a result")
                }
                attempts.append(JobAttempt(
                    attempt: statement.int(at: 0),
                    startedAt: statement.isNull(at: 1) ? nil : Timestamp.date(microseconds: statement.int64(at: 1)),
                    finishedAt: Timestamp.date(microseconds: statement.int64(at: 2)), result: result))
            }
            return attempts
        }
    }

    /// Stores the attempt a running job is ending, with its start time from the job row.
    func recordAttempt(_ id: JobID, result: JobResult, at: Date, in db: Database) throws {
        let statement = try db.cachedStatement("""
            INSERT OR REPLACE INTO job_attempts (job_id, attempt, started_at, finished_at, result, exit_code, signal, reason) \
            SELECT id, attempt, started_at, ?2, ?3, ?4, ?5, ?6 FROM jobs WHERE id = ?1 AND state = 'running' AND attempt > 0
            """)
        defer { statement.reset() }
        try statement.bind([
            .integer(id.rawValue), .integer(Timestamp.microseconds(at)), .text(result.name),
            .init(result.exitCode.map(Int64.init)), .init(result.signal.map(Int64.init)), .init(result.reason),
        ])
        try statement.step()
    }
}
