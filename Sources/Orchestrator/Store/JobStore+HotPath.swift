import Foundation
import OrchestratorAPI

// MARK: - The scheduler's hot path: transitions that happen together, in one transaction

extension JobStore {
    /// The IDs of the next queued jobs of a queue, in start order; served by the partial
    /// index `jobs_runnable` (no table scan, no sort).
    static let claimCandidatesSQL = """
        SELECT id FROM jobs WHERE state = 'queued' AND queue = ?1 AND held = 0 \
        ORDER BY priority DESC, id LIMIT ?2
        """

    /// Steps a prepared query of candidate IDs in start order whose last parameter is its
    /// `LIMIT`, and returns the first `limit` that are not in `excluding`. It reads
    /// `excluding.count` rows more than it keeps, so that excluded rows never cost a
    /// candidate; the set is filtered here rather than sent as a JSON array for SQLite to
    /// parse at every claim.
    /// - Parameters:
    ///   - statement: the query, reset; bound here.
    ///   - values: its parameters before the limit.
    ///   - limit: how many IDs to return at most.
    ///   - excluding: IDs to skip.
    /// - Throws: a ``DatabaseError``.
    static func candidates(
        of statement: Statement, _ values: [DatabaseValue], limit: Int, excluding: Set<JobID>
    ) throws -> [JobID] {
        statement.reset()
        defer { statement.reset() }
        try statement.bind(values + [.integer(Int64(limit + excluding.count))])
        var ids: [JobID] = []
        while ids.count < limit, try statement.step() {
            let id = JobID(rawValue: statement.int64(at: 0))
            if !excluding.contains(id) { ids.append(id) }
        }
        return ids
    }

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
            let candidates = try Self.candidates(
                of: db.cachedStatement(Self.claimCandidatesSQL), [.text(queue.rawValue)], limit: limit, excluding: excluding)
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
            let record = ProcessRecord(id: id, pid: pid, processStartTicks: processStartTicks, bootID: bootID)
            guard try !recordProcess(record, in: db) else { return }
            guard let job = try self.job(id) else { throw JobStoreError.noSuchJob(id) }
            throw JobStoreError.invalidTransition(id, from: job.state.name, to: "running")
        }
    }

    /// Records a running job's process and its `started` event.
    /// - Returns: whether the job was running (else nothing was written).
    private func recordProcess(_ process: ProcessRecord, in db: Database) throws -> Bool {
        let statement = try db.cachedStatement(
            "UPDATE jobs SET pid = ?2, process_start_ticks = ?3, boot_id = ?4 WHERE id = ?1 AND state = 'running'")
        defer { statement.reset() }
        try statement.bind([
            .integer(process.id.rawValue), .integer(Int64(process.pid)),
            .integer(Int64(bitPattern: process.processStartTicks)), .text(process.bootID),
        ])
        try statement.step()
        guard db.changes == 1 else { return false }
        try recordStarted(process.id, in: db)
        return true
    }

    /// Writes the `started` event of a running job's attempt. It is dated at the claim, the
    /// job's `started_at` (what `show` says), which the state trigger's dates of its later
    /// events never precede; never before its `submitted` event. Nothing when the job is not
    /// running.
    static let startedEventSQL = """
        INSERT INTO events (at, kind, job_id, queue, state, previous_state, attempt) \
        SELECT max(submitted_at, coalesce(started_at, 0)), 'started', id, queue, 'running', 'queued', attempt \
        FROM jobs WHERE id = ?1 AND state = 'running'
        """

    /// Records the `started` event of a running job's attempt whose process was spawned but
    /// whose pid was never recorded (the daemon died in between): recovery, which knows it
    /// started by the log file its process created.
    public func recordStartedWithoutProcess(_ id: JobID) throws {
        try database.write { db in try recordStarted(id, in: db) }
    }

    /// Records that a running job's attempt has started (``startedEventSQL``). An attempt has
    /// started once its process was spawned or Slurm took it; a claim given back before that
    /// started nothing (see `Migrations.v15StartedEventSQL`).
    func recordStarted(_ id: JobID, in db: Database) throws {
        let statement = try db.cachedStatement(Self.startedEventSQL)
        defer { statement.reset() }
        try statement.bind([.integer(id.rawValue)])
        try statement.step()
    }
}

extension JobStore {
    /// A started job's process, as ``recordProcessOnly(_:pid:processStartTicks:bootID:)`` records it.
    public struct ProcessRecord: Sendable {
        public var id: JobID
        public var pid: Int32
        public var processStartTicks: UInt64
        public var bootID: String

        /// Creates a value with every field given.
        public init(id: JobID, pid: Int32, processStartTicks: UInt64, bootID: String) {
            self.id = id
            self.pid = pid
            self.processStartTicks = processStartTicks
            self.bootID = bootID
        }
    }

    /// The final end of a running job's attempt, as ``markFinished(_:result:at:)`` records it.
    public struct RunningEnd: Sendable {
        public var id: JobID
        public var result: JobResult
        public var at: Date

        /// Creates a value with every field given.
        public init(id: JobID, result: JobResult, at: Date) {
            self.id = id
            self.result = result
            self.at = at
        }
    }

    static let finishRunningSQL = """
        UPDATE jobs SET state = 'finished', result = ?2, exit_code = ?3, signal = ?4, reason = ?5, \
        failed_dependency = ?6, finished_at = ?7, pid = NULL, process_start_ticks = NULL, boot_id = NULL, held = 0, \
        suspended = 0 WHERE id = ?1 AND state = 'running'
        """

    /// Records what the scheduler reaped in one turn, in one transaction and without reading
    /// a row back (the scheduler holds each row): the processes of jobs started, then the
    /// final ends of running jobs (each attempt stored, as ``markFinished(_:result:at:)``),
    /// then whatever `alsoWrite` writes, such as the claims of the slots the ends freed: one
    /// commit, not one per kind of change.
    /// - Parameters:
    ///   - processes: started processes, each recorded with its `started` event; one whose
    ///     job is no longer running is skipped.
    ///   - ends: final ends; every job must be running.
    ///   - alsoWrite: more writes of the same transaction, run after the ends.
    /// - Returns: what `alsoWrite` returned.
    /// - Throws: ``JobStoreError/invalidTransition(_:from:to:)`` when an ending job is not
    ///   running (``JobStoreError/noSuchJob(_:)`` when it is gone), what `alsoWrite` throws,
    ///   or a ``DatabaseError``; then nothing was written.
    public func recordReaped<Also>(
        processes: [ProcessRecord], ends: [RunningEnd], alsoWrite: () throws -> Also
    ) throws -> Also {
        try database.write { db in
            try recordReaped(processes: processes, ends: ends, in: db)
            return try alsoWrite()
        }
    }

    /// Records what the scheduler reaped in one turn, in one transaction, as
    /// ``recordReaped(processes:ends:alsoWrite:)`` does without more writes.
    public func recordReaped(processes: [ProcessRecord], ends: [RunningEnd]) throws {
        try recordReaped(processes: processes, ends: ends) { () }
    }

    private func recordReaped(processes: [ProcessRecord], ends: [RunningEnd], in db: Database) throws {
        if !processes.isEmpty {
            // A process whose job ends in this transaction needs no pid (the end clears it),
            // only its `started` event, before the end's.
            let ending = ends.isEmpty ? [] : Set(ends.map(\.id))
            for process in processes {
                if ending.contains(process.id) {
                    try recordStarted(process.id, in: db)
                } else {
                    _ = try recordProcess(process, in: db)
                }
            }
        }
        guard !ends.isEmpty else { return }
        let statement = try db.cachedStatement(Self.finishRunningSQL)
        defer { statement.reset() }
        for end in ends {
            try recordAttempt(end.id, result: end.result, at: end.at, in: db)
            statement.reset()
            try statement.bind([
                .integer(end.id.rawValue), .text(end.result.name), .init(end.result.exitCode.map(Int64.init)),
                .init(end.result.signal.map(Int64.init)), .init(end.result.reason),
                .init(end.result.failedDependency?.rawValue), .integer(Timestamp.microseconds(end.at)),
            ])
            try statement.step()
            guard db.changes == 1 else {
                guard let job = try self.job(end.id) else { throw JobStoreError.noSuchJob(end.id) }
                throw JobStoreError.invalidTransition(end.id, from: job.state.name, to: "finished")
            }
        }
    }
}
