import Foundation
import OrchestratorAPI

/// The numbered record of lifecycle events (`events` table). Job and queue events are written
/// by triggers in the same transaction as the change they describe (schema.sql); the few
/// events that are no row change (a queue drained, the daemon ready or stopping) are appended
/// here. Not `Sendable`: owned by the ``Scheduler`` actor, like the store whose connection it shares.
public final class EventLog {
    private let database: Database

    /// Creates the log over the store's connection.
    public init(database: Database) {
        self.database = database
    }

    /// The largest sequence number written so far (0 when none).
    public func lastSeq() throws -> Int64 {
        try database.read { db in
            let statement = try db.cachedStatement("SELECT coalesce(max(seq), 0) FROM events")
            defer { statement.reset() }
            _ = try statement.step()
            return statement.int64(at: 0)
        }
    }

    /// The smallest sequence number retained; `nil` when the log is empty.
    public func oldestSeq() throws -> Int64? {
        try database.read { db in
            let statement = try db.cachedStatement("SELECT min(seq) FROM events")
            defer { statement.reset() }
            _ = try statement.step()
            return statement.isNull(at: 0) ? nil : statement.int64(at: 0)
        }
    }

    /// Events after `seq` up to `through`, oldest first, matching the filters given, each with
    /// its job's owner while the job is stored.
    /// - Parameters:
    ///   - seq: only later events.
    ///   - through: only events up to this sequence number.
    ///   - queue: only this queue's events.
    ///   - jobID: only this job's events.
    ///   - limit: at most this many.
    public func events(after seq: Int64, through: Int64 = .max, queue: QueueName? = nil, jobID: JobID? = nil, limit: Int) throws -> [Event] {
        var sql = """
            SELECT e.seq AS seq, e.at AS at, e.kind AS kind, e.job_id AS job_id, e.queue AS queue, e.state AS state, \
            e.previous_state AS previous_state, e.result AS result, e.exit_code AS exit_code, e.signal AS signal, \
            e.attempt AS attempt, j.submitter_uid AS owner_uid FROM events e LEFT JOIN jobs j ON j.id = e.job_id WHERE e.seq > ?1 AND e.seq <= ?2
            """
        var values: [DatabaseValue] = [.integer(seq), .integer(through)]
        if let queue {
            sql += " AND e.queue = ?\(values.count + 1)"
            values.append(.text(queue.rawValue))
        }
        if let jobID {
            sql += " AND e.job_id = ?\(values.count + 1)"
            values.append(.integer(jobID.rawValue))
        }
        sql += " ORDER BY e.seq LIMIT ?\(values.count + 1)"
        values.append(.integer(Int64(max(0, limit))))
        return try database.read { db in
            let statement = try db.cachedStatement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            var events: [Event] = []
            while try statement.step() {
                let row = statement.row
                events.append(Event(
                    seq: row.int64("seq") ?? 0, at: Timestamp.date(microseconds: row.int64("at") ?? 0),
                    // The one place stored kind names become typed (the triggers write them).
                    kind: EventKind(rawValue: row.string("kind") ?? ""), jobId: row.int64("job_id").map(JobID.init(rawValue:)),
                    queue: row.string("queue").flatMap(QueueName.init(rawValue:)), state: row.string("state"),
                    previousState: row.string("previous_state"), result: row.string("result"),
                    exitCode: row.int64("exit_code").map { Int32(truncatingIfNeeded: $0) },
                    signal: row.int64("signal").map { Int32(truncatingIfNeeded: $0) },
                    attempt: row.int64("attempt").map { Int($0) },
                    ownerUid: row.int64("owner_uid").map { UInt32(truncatingIfNeeded: $0) }))
            }
            return events
        }
    }

    /// Whether a retained event names this queue: a removed queue's history stays readable.
    /// Scans the log (no index by queue); asked only for a queue orchd does not know.
    /// - Throws: ``DatabaseError``.
    public func mentions(queue: QueueName) throws -> Bool {
        try database.exists("SELECT EXISTS (SELECT 1 FROM events WHERE queue = ?1)", [.text(queue.rawValue)])
    }

    /// Whether a retained event is about this job: a pruned job's history stays readable.
    /// - Throws: ``DatabaseError``.
    public func mentions(jobID: JobID) throws -> Bool {
        try database.exists("SELECT EXISTS (SELECT 1 FROM events WHERE job_id = ?1)", [.integer(jobID.rawValue)])
    }

    /// Appends an event that is not a row change.
    /// - Parameters:
    ///   - kind: `queue_drained`, `daemon_ready` or `daemon_stopping`.
    ///   - queue: the queue it is about, if any.
    ///   - at: when it happened.
    public func append(kind: EventKind, queue: QueueName? = nil, at: Date) throws {
        try database.write { db in
            let statement = try db.cachedStatement("INSERT INTO events (at, kind, queue) VALUES (?, ?, ?)")
            defer { statement.reset() }
            try statement.bind([.integer(Timestamp.microseconds(at)), .text(kind.rawValue), .init(queue?.rawValue)])
            try statement.step()
        }
    }

    /// Deletes every event up to and including `seq` (a range of the primary key: cheap).
    /// - Returns: how many were deleted.
    @discardableResult
    public func prune(through seq: Int64) throws -> Int {
        try database.write { db in
            let statement = try db.cachedStatement("DELETE FROM events WHERE seq <= ?")
            defer { statement.reset() }
            try statement.bind([.integer(seq)])
            _ = try statement.step()
            return db.changes
        }
    }

    /// Deletes all but the newest `keep` events.
    /// - Returns: how many were deleted.
    @discardableResult
    public func prune(keep: Int) throws -> Int {
        try database.write { db in
            let statement = try db.cachedStatement("DELETE FROM events WHERE seq <= (SELECT max(seq) FROM events) - ?")
            defer { statement.reset() }
            try statement.bind([.integer(Int64(max(0, keep)))])
            _ = try statement.step()
            return db.changes
        }
    }
}
