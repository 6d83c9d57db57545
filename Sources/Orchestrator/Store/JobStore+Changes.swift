import Foundation
import OrchestratorAPI

// MARK: - Changes to jobs that keep their state: hold, suspend, edit; selections for bulk requests

extension JobStore {
    /// Holds (`true`) or releases (`false`) a job that has not started.
    /// - Returns: the job as now stored.
    /// - Throws: ``JobStoreError/invalidTransition(_:from:to:)`` when it is running or
    ///   finished (a race the state machine's check missed), or ``DatabaseError``.
    @discardableResult
    public func setHeld(_ id: JobID, _ held: Bool) throws -> Job {
        try transition(id, to: held ? "held" : "released", sql: """
            UPDATE jobs SET held = ?2 WHERE id = ?1 AND state IN ('waiting', 'queued') RETURNING \(Self.columns)
            """, values: [.integer(id.rawValue), .integer(held ? 1 : 0)])
    }

    /// Records that a running job's processes are stopped (`true`) or go on (`false`).
    /// - Returns: the job as now stored.
    /// - Throws: ``JobStoreError/invalidTransition(_:from:to:)`` when it is not running, or
    ///   ``DatabaseError``.
    @discardableResult
    public func setSuspended(_ id: JobID, _ suspended: Bool) throws -> Job {
        try transition(id, to: suspended ? "suspended" : "continued", sql: """
            UPDATE jobs SET suspended = ?2 WHERE id = ?1 AND state = 'running' RETURNING \(Self.columns)
            """, values: [.integer(id.rawValue), .integer(suspended ? 1 : 0)])
    }

    /// Changes a job that has not started: its priority, queue, start time and name, and its
    /// state (``JobStateMachine`` placed it by the new start time).
    /// - Parameters:
    ///   - id: the job; it must be waiting or queued.
    ///   - spec: the spec with the new values (only those four fields are written).
    ///   - state: `waiting` or `queued`.
    /// - Returns: the job as now stored.
    /// - Throws: ``JobStoreError/invalidTransition(_:from:to:)`` when it has started, or
    ///   ``DatabaseError``.
    @discardableResult
    public func edit(_ id: JobID, spec: JobSpec, state: JobState) throws -> Job {
        precondition(state == .queued || state == .waiting, "an edited job is waiting or queued")
        return try transition(id, to: state.name, sql: """
            UPDATE jobs SET priority = ?2, queue = ?3, not_before = ?4, name = ?5, state = ?6 \
            WHERE id = ?1 AND state IN ('waiting', 'queued') RETURNING \(Self.columns)
            """, values: [
                .integer(id.rawValue), .integer(Int64(spec.priority)), .text(spec.queue.rawValue),
                .init(spec.notBefore.map(Timestamp.microseconds)), .init(spec.name), .text(state.name),
            ])
    }

    /// The jobs that have not finished and match the filters, by ID: what `cancel --queue Q
    /// --state S` cancels.
    /// - Parameters:
    ///   - queue: only this queue's jobs; `nil` for any.
    ///   - stateName: `waiting`, `queued` or `running`; `nil` for any of them.
    public func unfinishedJobIDs(queue: QueueName?, stateName: String?) throws -> [JobID] {
        var values: [DatabaseValue] = queue.map { [.text($0.rawValue)] } ?? []
        if let stateName, stateName != "queued" || queue == nil { values.append(.text(stateName)) }
        return try ids(Self.unfinishedJobIDsSQL(byQueue: queue != nil, state: stateName), values)
    }

    /// The query of ``unfinishedJobIDs(queue:stateName:)``, which reads the unfinished jobs it
    /// may return and never the finished ones, which may be millions: a queue's queued jobs
    /// through `jobs_runnable`, which holds queued jobs by queue; the others through the
    /// state's index, with the queue matched as `+queue`, an expression no index serves
    /// (searched by `jobs_by_queue`, the query read every job the queue ever kept: 58 ms at
    /// 300,000 finished, against 1 ms).
    /// - Parameters:
    ///   - byQueue: whether the queue is bound, as `?1`.
    ///   - state: `waiting`, `queued` or `running` (bound after the queue, but for a queue's
    ///     queued jobs, whose index names the state), or `nil` for any of them.
    static func unfinishedJobIDsSQL(byQueue: Bool, state: String?) -> String {
        guard byQueue else {
            return "SELECT id FROM jobs WHERE state " + (state == nil ? "IN ('waiting', 'queued', 'running')" : "= ?") + " ORDER BY id"
        }
        let queued = "SELECT id FROM jobs INDEXED BY jobs_runnable WHERE state = 'queued' AND queue = ?1"
        switch state {
        case "queued"?: return queued + " ORDER BY id"
        case nil: return queued + " UNION ALL SELECT id FROM jobs WHERE state IN ('waiting', 'running') AND +queue = ?1 ORDER BY id"
        default: return "SELECT id FROM jobs WHERE state = ?2 AND +queue = ?1 ORDER BY id"
        }
    }

    /// The finished jobs whose result is one of `results`, by ID: what `retry --failed`
    /// retries.
    /// - Parameters:
    ///   - results: result names (``JobResult/name``).
    ///   - queue: only this queue's jobs; `nil` for any.
    public func finishedJobIDs(results: [String], queue: QueueName?) throws -> [JobID] {
        var sql = "SELECT id FROM jobs WHERE state = 'finished' AND result IN (SELECT value FROM json_each(?))"
        let encoded = "[" + results.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        var values: [DatabaseValue] = [.text(encoded)]
        if let queue {
            sql += " AND queue = ?"
            values.append(.text(queue.rawValue))
        }
        return try ids(sql + " ORDER BY id", values)
    }

    private func ids(_ sql: String, _ values: [DatabaseValue]) throws -> [JobID] {
        try database.read { db in
            let statement = try db.cachedStatement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            var ids: [JobID] = []
            while try statement.step() { ids.append(JobID(rawValue: statement.int64(at: 0))) }
            return ids
        }
    }
}
