import Foundation
import OrchestratorAPI

// MARK: - Queues, counts, pruning

extension JobStore {
    /// Every queue's stored settings, by name.
    public func queueSettings() throws -> [QueueSettings] {
        try database.read { db in
            let statement = try db.cachedStatement(
                "SELECT name, concurrency, paused, retry_base_usec, retry_cap_usec, hooks FROM queues ORDER BY name")
            defer { statement.reset() }
            var settings: [QueueSettings] = []
            while try statement.step() {
                let text = statement.string(at: 0) ?? ""
                guard let name = QueueName(rawValue: text) else {
                    throw JobStoreError.invalidRow(id: 0, column: "queues.name", detail: "'\(text)' is not a queue name")
                }
                settings.append(QueueSettings(
                    name: name, concurrency: statement.isNull(at: 1) ? nil : statement.int(at: 1),
                    paused: statement.int(at: 2) != 0,
                    retryBaseUSec: statement.isNull(at: 3) ? nil : statement.int64(at: 3),
                    retryCapUSec: statement.isNull(at: 4) ? nil : statement.int64(at: 4),
                    hooks: (try? JSONDecoder().decode([String: String].self, from: Data((statement.string(at: 5) ?? "{}").utf8))) ?? [:]))
            }
            return settings
        }
    }

    /// Stores a queue's settings, creating its row when new.
    public func save(_ settings: QueueSettings) throws {
        try database.write { db in
            let statement = try db.cachedStatement("""
                INSERT INTO queues (name, concurrency, paused, retry_base_usec, retry_cap_usec, hooks) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                ON CONFLICT (name) DO UPDATE SET concurrency = ?2, paused = ?3, retry_base_usec = ?4, retry_cap_usec = ?5, hooks = ?6
                """)
            defer { statement.reset() }
            try statement.bind([
                .text(settings.name.rawValue), .init(settings.concurrency), .integer(settings.paused ? 1 : 0),
                .init(settings.retryBaseUSec), .init(settings.retryCapUSec), .text(try json(settings.hooks)),
            ])
            try statement.step()
        }
    }

    /// How many jobs of each queue are in each state: one pass over the table, at start-up.
    public func countsByQueue() throws -> [QueueName: JobCounts] {
        try database.read { db in
            let statement = try db.cachedStatement("SELECT queue, state, count(*) FROM jobs GROUP BY queue, state")
            defer { statement.reset() }
            var counts: [QueueName: JobCounts] = [:]
            while try statement.step() {
                guard let name = QueueName(rawValue: statement.string(at: 0) ?? "") else { continue }
                let count = statement.int(at: 2)
                switch statement.string(at: 1) {
                case "waiting": counts[name, default: JobCounts()].waiting = count
                case "queued": counts[name, default: JobCounts()].queued = count
                case "running": counts[name, default: JobCounts()].running = count
                case "finished": counts[name, default: JobCounts()].finished = count
                default: break  // the CHECK constraint admits no other state
                }
            }
            return counts
        }
    }

    /// Deletes finished jobs, with their attempts and dependency rows, at most `batchSize`
    /// in one transaction; never a job that a job not yet finished depends on.
    /// - Parameters:
    ///   - finishedBefore: only jobs finished before this time; `nil` for any finished job.
    ///   - keepNewest: keep this many of the most recently finished jobs (0 keeps none).
    ///   - batchSize: the most rows deleted in this call, so a large prune never holds the
    ///     write lock for long; call again until it returns fewer.
    /// - Returns: the deleted jobs' IDs and queues (their log files are the caller's to remove).
    /// - Throws: ``DatabaseError``.
    public func pruneFinished(finishedBefore: Date?, keepNewest: Int = 0, batchSize: Int = 1000) throws -> [(id: JobID, queue: QueueName)] {
        var sql = """
            DELETE FROM jobs WHERE id IN (
                SELECT id FROM jobs WHERE state = 'finished' AND finished_at < ?1
                AND NOT EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs c ON c.id = d.job_id
                                WHERE d.depends_on = jobs.id AND c.state <> 'finished')
            """
        if keepNewest > 0 {
            sql += " AND id NOT IN (SELECT id FROM jobs WHERE state = 'finished' ORDER BY finished_at DESC LIMIT ?3)"
        }
        sql += " ORDER BY finished_at LIMIT ?2) RETURNING id, queue"
        var values: [DatabaseValue] = [
            .integer(finishedBefore.map(Timestamp.microseconds) ?? Int64.max), .integer(Int64(max(1, batchSize))),
        ]
        if keepNewest > 0 { values.append(.integer(Int64(keepNewest))) }
        return try database.write { db in
            let statement = try db.cachedStatement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            var deleted: [(id: JobID, queue: QueueName)] = []
            while try statement.step() {
                deleted.append((JobID(rawValue: statement.int64(at: 0)), QueueName(rawValue: statement.string(at: 1) ?? "") ?? .default))
            }
            return deleted
        }
    }
}
