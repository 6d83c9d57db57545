import Foundation
import OrchestratorAPI

// MARK: - Waiting, retrying and dependencies

extension JobStore {
    /// Waiting jobs whose start time has come (a timer fired), for ``JobStateMachine`` to
    /// decide on: their dependencies may still hold them back.
    /// - Parameter now: jobs with `notBefore` up to this time are candidates.
    /// - Returns: the candidates, by ID.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func waitingJobs(dueBy now: Date) throws -> [Job] {
        // The partial index jobs_waiting, named: without statistics SQLite prefers
        // jobs_by_state, which reads every waiting job, those waiting only for a dependency too.
        try select("""
            SELECT \(Self.columns) FROM jobs INDEXED BY jobs_waiting WHERE state = 'waiting' AND not_before IS NOT NULL \
            AND not_before <= ?1 ORDER BY id
            """, [.integer(Timestamp.microseconds(now))]).map(\.job)
    }

    /// The waiting jobs that depend on `id`: to promote when it succeeded, or to fail when it
    /// did not.
    /// - Returns: the jobs, by ID.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func waitingDependents(of id: JobID) throws -> [Job] {
        try select("""
            SELECT \(Self.columns) FROM jobs WHERE state = 'waiting' \
            AND id IN (SELECT job_id FROM job_dependencies WHERE depends_on = ?1) ORDER BY id
            """, [.integer(id.rawValue)]).map(\.job)
    }

    /// Waiting jobs that have dependencies, none of them unfinished (each finished, or pruned):
    /// nothing is left to wait for but their start time, so they are to be queued or failed.
    /// Normally settled when their last dependency ends; this finds those a refused write
    /// left behind. Reads every waiting job (all of them are candidates) and their dependency
    /// rows.
    /// - Returns: the jobs, by ID.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func waitingJobsWithFinishedDependencies() throws -> [Job] {
        try select("""
            SELECT \(Self.columns) FROM jobs WHERE state = 'waiting' \
            AND EXISTS (SELECT 1 FROM job_dependencies d WHERE d.job_id = jobs.id) \
            AND NOT EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs p ON p.id = d.depends_on \
            WHERE d.job_id = jobs.id AND p.state <> 'finished') ORDER BY id
            """, []).map(\.job)
    }

    /// The dependencies of each job that have not succeeded, in `after` order, with their
    /// state; `nil` when the dependency is not stored (pruned).
    /// - Parameter ids: the jobs asked about.
    /// - Returns: an entry for each job with such a dependency; jobs without one are absent.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func unsucceededDependencies(of ids: [JobID]) throws -> [JobID: [(id: JobID, state: JobState?)]] {
        guard !ids.isEmpty else { return [:] }
        return try database.read { db in
            let statement = try db.cachedStatement("""
                SELECT d.job_id, d.depends_on, p.id IS NULL, p.state, p.result, p.exit_code, p.signal, p.reason, \
                p.failed_dependency FROM job_dependencies d LEFT JOIN jobs p ON p.id = d.depends_on \
                WHERE d.job_id IN (SELECT value FROM json_each(?1)) \
                AND (p.id IS NULL OR p.state <> 'finished' OR p.result <> 'succeeded') ORDER BY d.job_id, d.depends_on
                """)
            defer { statement.reset() }
            try statement.bind([.text(Self.jsonArray(ids))])
            var found: [JobID: [(id: JobID, state: JobState?)]] = [:]
            while try statement.step() {
                let dependency = JobID(rawValue: statement.int64(at: 1))
                let state = statement.int64(at: 2) != 0 ? nil : try Self.state(statement, at: 3, id: dependency)
                found[JobID(rawValue: statement.int64(at: 0)), default: []].append((dependency, state))
            }
            return found
        }
    }

    /// Reads a state from six columns starting at `index`: state, result, exit_code, signal,
    /// reason, failed_dependency.
    /// - Throws: ``JobStoreError/invalidRow(id:column:detail:)`` for a state or result that is not one.
    static func state(_ row: Statement, at index: Int, id: JobID) throws -> JobState {
        switch row.string(at: index) {
        case "waiting": return .waiting
        case "queued": return .queued
        case "running": return .running
        case "finished":
            let name = row.string(at: index + 1) ?? ""
            func int32(_ column: Int) -> Int32? {
                row.isNull(at: column) ? nil : Int32(truncatingIfNeeded: row.int64(at: column))
            }
            guard let result = JobResult(
                name: name, exitCode: int32(index + 2), signal: int32(index + 3), reason: row.string(at: index + 4),
                failedDependency: row.isNull(at: index + 5) ? nil : JobID(rawValue: row.int64(at: index + 5)))
            else { throw JobStoreError.invalidRow(id: id.rawValue, column: "result", detail: "'\(name)' with its payload is not a job result") }
            return .finished(result)
        case let other:
            throw JobStoreError.invalidRow(id: id.rawValue, column: "state", detail: "'\(other ?? "NULL")' is not a job state")
        }
    }

    /// Moves waiting jobs to queued (``JobStateMachine`` decided they are eligible).
    /// - Parameter ids: the jobs; one no longer waiting is left alone.
    /// - Returns: the jobs now queued.
    /// - Throws: ``DatabaseError``.
    public func markQueued(_ ids: [JobID]) throws -> [Job] {
        guard !ids.isEmpty else { return [] }
        return try database.write { _ in
            try select("""
                UPDATE jobs SET state = 'queued' WHERE state = 'waiting' AND id IN (SELECT value FROM json_each(?1)) \
                RETURNING \(Self.columns)
                """, [.text(Self.jsonArray(ids))]).map(\.job)
        }
    }

    /// The earliest future start among waiting jobs (delays, `--at`, retry backoff), for the
    /// scheduler's one wake-up timer.
    /// - Parameter after: only starts later than this.
    /// - Returns: that time, or `nil` when no waiting job has one.
    public func nextWakeUp(after: Date) throws -> Date? {
        try database.read { db in
            let statement = try db.cachedStatement(
                // Named for the reason in waitingJobs(dueBy:): a scan of every waiting job here,
                // after each retry of a job that waits, made `retry --failed` quadratic.
                "SELECT min(not_before) FROM jobs INDEXED BY jobs_waiting WHERE state = 'waiting' AND not_before > ?")
            defer { statement.reset() }
            try statement.bind([.integer(Timestamp.microseconds(after))])
            guard try statement.step(), !statement.isNull(at: 0) else { return nil }
            return Timestamp.date(microseconds: statement.int64(at: 0))
        }
    }

    /// The live job of `owner` holding a unique key, if any: keys are each user's own, so
    /// one user's key never blocks another's submit.
    public func liveJob(uniqueKey: String, owner: UInt32) throws -> Job? {
        try select(
            "SELECT \(Self.columns) FROM jobs WHERE submitter_uid = ? AND unique_key = ? AND state <> 'finished'",
            [.integer(Int64(owner)), .text(uniqueKey)]
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
                boot_id = NULL, slurm_job_id = NULL, suspended = 0 WHERE id = ?1 AND state = 'running' RETURNING \(Self.columns)
                """, values: [.integer(id.rawValue), .integer(Timestamp.microseconds(retryAt))])
        }
    }

    /// Puts a finished job back for one more attempt (`orchctl retry`): same ID, the attempt
    /// count goes on, at least one more attempt is allowed (attempts it still had, say when it
    /// was cancelled during a retry backoff, are kept), and its start time is kept.
    /// - Parameters:
    ///   - id: the job; it must be finished.
    ///   - state: `queued`, or `waiting` for its dependencies or start time
    ///     (``JobStateMachine`` decides).
    /// - Returns: the job as now stored.
    /// - Throws: ``JobStoreError/invalidTransition(_:from:to:)`` when it is not finished.
    @discardableResult
    public func markRequeued(_ id: JobID, to state: JobState = .queued) throws -> Job {
        precondition(state == .queued || state == .waiting, "a retried job is queued or waiting")
        return try transition(id, to: state.name, sql: """
            UPDATE jobs SET state = ?2, result = NULL, exit_code = NULL, signal = NULL, reason = NULL, \
            failed_dependency = NULL, finished_at = NULL, max_attempts = max(max_attempts, attempt + 1) \
            WHERE id = ?1 AND state = 'finished' RETURNING \(Self.columns)
            """, values: [.integer(id.rawValue), .text(state.name)])
    }

    /// ``markRequeued(_:to:)``, and in the same transaction each queued job that depends on
    /// it and that `waitsAgain` picks (``JobStateMachine/Operation/dependencyRetried``) back
    /// to waiting, so no crash between the two can start a dependent before the retried job
    /// ends.
    /// - Parameters:
    ///   - id: the job; it must be finished.
    ///   - state: `queued` or `waiting`, as for ``markRequeued(_:to:)``.
    ///   - waitsAgain: whether a queued dependent goes back to waiting.
    /// - Returns: the job as now stored, and the dependents moved (their environment not read).
    /// - Throws: as ``markRequeued(_:to:)``.
    public func markRequeued(
        _ id: JobID, to state: JobState, movingDependents waitsAgain: (Job) -> Bool
    ) throws -> (job: Job, waitingAgain: [Job]) {
        try database.write { _ in
            let job = try markRequeued(id, to: state)
            let chosen = try select("""
                SELECT \(Self.columns) FROM jobs WHERE state = 'queued' \
                AND id IN (SELECT job_id FROM job_dependencies WHERE depends_on = ?1) ORDER BY id
                """, [.integer(id.rawValue)], environment: false).map(\.job).filter(waitsAgain)
            guard !chosen.isEmpty else { return (job, []) }
            let moved = try select("""
                UPDATE jobs SET state = 'waiting' WHERE state = 'queued' AND id IN (SELECT value FROM json_each(?1)) \
                RETURNING \(Self.columns)
                """, [.text(Self.jsonArray(chosen.map(\.id)))], environment: false).map(\.job)
            return (job, moved)
        }
    }

    /// Every recorded attempt of a job, oldest first.
    public func attempts(of id: JobID) throws -> [JobAttempt] {
        try database.read { db in
            let statement = try db.cachedStatement("""
                SELECT attempt, started_at, finished_at, result, exit_code, signal, reason, slurm_job_id \
                FROM job_attempts WHERE job_id = ? ORDER BY attempt
                """)
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue)])
            var attempts: [JobAttempt] = []
            while try statement.step() {
                let row = statement.row
                let name = row.string("result") ?? ""
                guard let result = JobResult(
                    name: name, exitCode: row.int64("exit_code").map { Int32(truncatingIfNeeded: $0) },
                    signal: row.int64("signal").map { Int32(truncatingIfNeeded: $0) },
                    reason: row.string("reason"), failedDependency: nil)
                else {
                    throw JobStoreError.invalidRow(id: id.rawValue, column: "job_attempts.result", detail: "'\(name)' is not a result")
                }
                attempts.append(JobAttempt(
                    attempt: Int(row.int64("attempt") ?? 0),
                    startedAt: row.int64("started_at").map(Timestamp.date(microseconds:)),
                    finishedAt: Timestamp.date(microseconds: row.int64("finished_at") ?? 0), result: result,
                    slurmJobId: row.string("slurm_job_id")))
            }
            return attempts
        }
    }

    /// Stores the attempt a running job is ending, with its start time from the job row.
    func recordAttempt(_ id: JobID, result: JobResult, at: Date, in db: Database) throws {
        let statement = try db.cachedStatement("""
            INSERT OR REPLACE INTO job_attempts (job_id, attempt, started_at, finished_at, result, exit_code, signal, reason, \
            slurm_job_id) SELECT id, attempt, started_at, ?2, ?3, ?4, ?5, ?6, nullif(slurm_job_id, '') FROM jobs WHERE id = ?1 AND state = 'running' AND attempt > 0
            """)
        defer { statement.reset() }
        try statement.bind([
            .integer(id.rawValue), .integer(Timestamp.microseconds(at)), .text(result.name),
            .init(result.exitCode.map(Int64.init)), .init(result.signal.map(Int64.init)), .init(result.reason),
        ])
        try statement.step()
    }
}

// MARK: - Endings known before an attempt ends

extension JobStore {
    /// A result stored ahead of an attempt's end (``recordEnding(_:_:replacing:final:)``).
    public struct Ending: Hashable, Sendable {
        /// The result the attempt ends with.
        public var result: JobResult
        /// A cancel came while the attempt's processes were torn down: no retry follows it,
        /// whatever its result.
        public var isFinal = false
    }

    /// Stores the result a running attempt will end with, known before its processes are gone:
    /// a cancel or a timeout whose teardown has begun, or the result of a main process that
    /// exited and left processes to tear down. A crash of orchd during that teardown's grace
    /// then loses nothing: recovery records this result (``endings()``) instead of
    /// `interrupted`, so a job that succeeded, or was cancelled, does not run again. The first
    /// result stored for an attempt stays (a cancel that comes after the main process exited
    /// does not replace its result, as the scheduler does not), unless `replacing`; the next
    /// claim clears it.
    /// - Parameters:
    ///   - id: the job; nothing is stored unless it is running.
    ///   - result: its result.
    ///   - replacing: whether it replaces a result stored before: the main process's own, which
    ///     is the attempt's when no stop was under way as it exited, over a cancel stored in
    ///     the moment before that exit reached the scheduler.
    ///   - final: a cancel: whatever result the attempt ends with, no retry follows (kept
    ///     when a later call replaces the result).
    /// - Throws: ``DatabaseError``.
    public func recordEnding(_ id: JobID, _ result: JobResult, replacing: Bool = false, final: Bool = false) throws {
        guard let text = Self.endingText(result) else { return }
        try database.write { db in
            // The mark of a final ending is a suffix of the text, so an orchd that does not
            // know it reads no ending (and records `interrupted`, as before endings were kept).
            let statement = try db.cachedStatement(replacing
                ? """
                    UPDATE jobs SET ending = ?2 || CASE WHEN ?3 OR ending LIKE '%\(Self.finalMark)' THEN '\(Self.finalMark)' ELSE '' END \
                    WHERE id = ?1 AND state = 'running'
                    """
                : """
                    UPDATE jobs SET ending = coalesce(ending, ?2) || CASE WHEN ?3 AND (ending IS NULL OR ending NOT LIKE '%\(Self.finalMark)') \
                    THEN '\(Self.finalMark)' ELSE '' END WHERE id = ?1 AND state = 'running'
                    """)
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue), .text(text), .integer(final ? 1 : 0)])
            _ = try statement.step()
        }
    }

    /// The suffix of a final ending's text (``Ending/isFinal``).
    static let finalMark = ";final"

    /// The endings stored for running jobs (``recordEnding(_:_:replacing:final:)``), by job; a
    /// text this orchd cannot read is left out (the job is then `interrupted`, as before
    /// endings were kept).
    /// - Throws: ``DatabaseError``.
    public func endings() throws -> [JobID: Ending] {
        try database.read { db in
            let statement = try db.cachedStatement("SELECT id, ending FROM jobs WHERE state = 'running' AND ending IS NOT NULL")
            defer { statement.reset() }
            var endings: [JobID: Ending] = [:]
            while try statement.step() {
                guard var text = statement.string(at: 1) else { continue }
                let isFinal = text.hasSuffix(Self.finalMark)
                if isFinal { text.removeLast(Self.finalMark.count) }
                if let result = Self.ending(from: text) {
                    endings[JobID(rawValue: Int64(statement.int(at: 0)))] = Ending(result: result, isFinal: isFinal)
                }
            }
            return endings
        }
    }

    /// An ending as stored: the result's name, with its exit status or signal after a colon
    /// (`succeeded`, `failed:3`, `signaled:9`, `cancelled`, `timed_out`); `nil` for the results
    /// an attempt's processes never end with while they run.
    static func endingText(_ result: JobResult) -> String? {
        switch result {
        case .succeeded, .cancelled, .timedOut: result.name
        case .failed(let code): "failed:\(code)"
        case .signaled(let signal): "signaled:\(signal)"
        case .interrupted, .spawnFailed, .dependencyFailed: nil
        }
    }

    /// The result ``endingText(_:)`` wrote, or `nil` for any other text.
    static func ending(from text: String) -> JobResult? {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts.first, parts.count == 2 ? Int32(parts[1]) : nil) {
        case ("succeeded", nil) where parts.count == 1: return .succeeded
        case ("cancelled", nil) where parts.count == 1: return .cancelled
        case ("timed_out", nil) where parts.count == 1: return .timedOut
        case ("failed", let code?): return .failed(exitCode: code)
        case ("signaled", let signal?): return .signaled(signal: signal)
        default: return nil
        }
    }
}
