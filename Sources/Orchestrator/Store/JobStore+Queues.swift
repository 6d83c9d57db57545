import Foundation
import OrchestratorAPI

// MARK: - Queues, counts, pruning

extension JobStore {
    /// Every queue's stored settings, by name.
    public func queueSettings() throws -> [QueueSettings] {
        try database.read { db in
            let statement = try db.cachedStatement(
                """
                SELECT name, concurrency, paused, retry_base_usec, retry_cap_usec, hooks, max_running_per_user, executor, \
                slurm_partition, slurm_options FROM queues ORDER BY name
                """)
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
                    hooks: (try? JSONDecoder().decode([String: String].self, from: Data((statement.string(at: 5) ?? "{}").utf8))) ?? [:],
                    maxRunningPerUser: statement.isNull(at: 6) ? nil : statement.int(at: 6),
                    executor: QueueExecutorSettings(
                        kind: QueueExecutorSettings.Kind(rawValue: statement.string(at: 7) ?? "") ?? .local,
                        slurmPartition: statement.string(at: 8),
                        slurmOptions: (try? JSONDecoder().decode([String].self, from: Data((statement.string(at: 9) ?? "[]").utf8))) ?? [])))
            }
            return settings
        }
    }

    /// Stores a queue's settings, creating its row when new.
    public func save(_ settings: QueueSettings) throws {
        try database.write { db in
            let statement = try db.cachedStatement("""
                INSERT INTO queues (name, concurrency, paused, retry_base_usec, retry_cap_usec, hooks, max_running_per_user, \
                executor, slurm_partition, slurm_options) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
                ON CONFLICT (name) DO UPDATE SET concurrency = ?2, paused = ?3, retry_base_usec = ?4, retry_cap_usec = ?5, hooks = ?6, \
                max_running_per_user = ?7, executor = ?8, slurm_partition = ?9, slurm_options = ?10
                """)
            defer { statement.reset() }
            try statement.bind([
                .text(settings.name.rawValue), .init(settings.concurrency), .integer(settings.paused ? 1 : 0),
                .init(settings.retryBaseUSec), .init(settings.retryCapUSec), .text(try json(settings.hooks)),
                .init(settings.maxRunningPerUser),
                .text(settings.executor.kind.rawValue), .init(settings.executor.slurmPartition),
                .text(try json(settings.executor.slurmOptions)),
            ])
            try statement.step()
        }
    }

    /// Deletes a queue's settings row: the queue is no longer declared.
    public func deleteQueue(_ name: QueueName) throws {
        try database.write { db in
            let statement = try db.cachedStatement("DELETE FROM queues WHERE name = ?1")
            defer { statement.reset() }
            try statement.bind([.text(name.rawValue)])
            try statement.step()
        }
    }

    /// How many jobs of each queue are in each state, from `job_counts` (kept by triggers):
    /// a few rows, however many jobs there are.
    public func countsByQueue() throws -> [QueueName: JobCounts] {
        try database.read { db in
            let statement = try db.cachedStatement("SELECT queue, state, count FROM job_counts WHERE count > 0")
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
}
