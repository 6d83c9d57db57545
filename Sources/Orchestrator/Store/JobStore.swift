import Foundation
import OrchestratorAPI

/// The durable record of every job: inserts, state transitions and the queries the scheduler
/// and the control interface need, over one ``Database``.
///
/// Each method is one transaction, or a savepoint when called inside ``Database/write(_:)``,
/// so several changes can share one commit (group commit). Times are stored as integer
/// microseconds since the Unix epoch (``Timestamp/microseconds(_:)``), so a `Date` read back
/// is the one written, rounded to the microsecond.
/// ```swift
/// let store = try JobStore(database: Database(path: path))
/// let job = try store.insert(spec, submitterUid: uid, at: Date())
/// let next = try store.nextQueued(in: .default, excluding: [], limit: 4)
/// ```
/// Not thread-safe and not `Sendable`: the ``Scheduler`` actor owns it (tests own their own).
public final class JobStore {
    /// The connection the store works through.
    public let database: Database
    private let encoder: JSONEncoder
    let decoder = JSONDecoder()
    /// Environments decoded so far, by their row ID in `environments`. A committed row is
    /// never changed and its ID never reused (AUTOINCREMENT), so an entry stays right; most
    /// jobs share a few environments, so each is decoded about once. A row read inside a
    /// transaction that then rolls back is gone and its ID is given again (a submit claims
    /// its new jobs, reading their environment, before its commit, which a full disk can
    /// fail), so the entries go at every rollback (``decodedAtRollbacks``).
    var decodedEnvironments: [Int64: [String: String]] = [:]
    /// ``Database/rollbacks`` when ``decodedEnvironments`` was last known right.
    var decodedAtRollbacks = 0
    /// The environment a committed insert stored or found last, and its row: the submits of
    /// one shell send the same one each time, and comparing it is a small part of encoding
    /// and looking it up again. Set only once its transaction committed; cleared when pruning
    /// deletes environments.
    var lastStoredEnvironment: (environment: [String: String], id: Int64)?

    /// Opens the store, bringing the schema up to date with ``Migrations/migrator``.
    /// - Parameter database: the connection to use from now on.
    /// - Throws: ``DatabaseError`` when a migration fails (busy, full, ...), or
    ///   ``JobStoreError/unknownMigrations(_:)`` when a newer orchd wrote the database.
    public init(database: Database) throws {
        self.database = database
        let encoder = JSONEncoder()
        // Sorted keys: the same spec always gives the same bytes. Unescaped slashes keep
        // paths readable in the sqlite3 shell.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.encoder = encoder
        try Migrations.migrator.migrate(database)
    }

    // MARK: - SQL

    /// The columns every job query selects; ``decodeJob(_:environment:)`` reads them by name,
    /// so their order is not needed for correctness. It is the order the decoder reads them
    /// in, which makes each name's lookup one comparison (``Statement/columnIndex(_:)``).
    static let columns = """
        id, queue, argv, shell, labels, cwd, priority, name, \
        (SELECT json_group_array(depends_on) FROM job_dependencies WHERE job_id = jobs.id) AS dependencies, \
        not_before, timeout_usec, max_attempts, unique_key, environment_id, state, result, exit_code, signal, reason, \
        failed_dependency, submitter_uid, attempt, submitted_at, started_at, finished_at, pid, held, suspended, \
        slurm_job_id, process_start_ticks, boot_id
        """

    /// The insert of `rows` jobs in one statement, for each `rows` of ``insertRowCounts``,
    /// with the new IDs (one row: none, `lastInsertRowID` is its ID; `RETURNING` builds a
    /// temporary table per statement, a cost that only several rows share).
    ///
    /// Rows share a statement because SQLite's cost per statement, beside its cost per row,
    /// is most of an insert's: starting and ending it, its statement journal, and the
    /// `AUTOINCREMENT` counters of `jobs` and of the trigger's `events`, read and written once
    /// a statement. 1,000 jobs as one statement each took 78,000 instructions a job in SQLite,
    /// as statements of 32 rows 37,000.
    static let insertSQL: [Int: String] = Dictionary(uniqueKeysWithValues: insertRowCounts.map { rows in
        let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)"
        return (rows, """
            INSERT INTO jobs (name, queue, priority, argv, shell, cwd, environment_id, labels, state, result, \
            failed_dependency, finished_at, attempt, max_attempts, submitter_uid, submitted_at, not_before, \
            timeout_usec, unique_key) VALUES \(repeatElement(row, count: rows).joined(separator: ", "))\(rows > 1 ? " RETURNING id" : "")
            """)
    })

    /// The row counts of the insert statements: a batch goes in statements of 32, its rest
    /// in at most five smaller ones (its binary digits), so six statements stay prepared.
    static let insertRowCounts = [32, 16, 8, 4, 2, 1]

    /// Values bound per row of ``insertSQL``.
    private static let insertColumns = 18

    /// Served by the partial index `jobs_runnable`: a search on `queue`, already in
    /// `priority DESC, id` order, so no sort and no table scan however many jobs wait.
    static let nextQueuedSQL = """
        SELECT \(columns) FROM jobs WHERE state = 'queued' AND queue = ?1 AND held = 0 \
        AND id NOT IN (SELECT value FROM json_each(?2)) ORDER BY priority DESC, id LIMIT ?3
        """

    /// A loose index scan: each step seeks the next distinct queue in `jobs_runnable`, so the
    /// cost grows with the number of queues, not of queued jobs.
    static let markRunningSQL = """
        UPDATE jobs SET state = 'running', attempt = attempt + 1, started_at = ?2, finished_at = NULL, \
        pid = ?3, process_start_ticks = ?4, boot_id = ?5, ending = NULL WHERE id = ?1 AND state = 'queued' RETURNING \(columns)
        """

    static let markFinishedSQL = """
        UPDATE jobs SET state = 'finished', result = ?2, exit_code = ?3, signal = ?4, reason = ?5, \
        failed_dependency = ?6, finished_at = ?7, pid = NULL, process_start_ticks = NULL, boot_id = NULL, held = 0, \
        suspended = 0, slurm_job_id = NULL WHERE id = ?1 AND state <> 'finished' RETURNING \(columns)
        """

    // MARK: - Inserting

    /// Records a new job, queued, with no attempt made yet and one attempt allowed.
    /// - Parameters:
    ///   - spec: what to run; stored as given (validate it first with ``JobSpec/validate()``).
    ///   - submitterUid: the client's Unix uid.
    ///   - at: the submission time (stored to the microsecond).
    /// - Returns: the job as stored, with its new ID.
    /// - Throws: ``DatabaseError`` (busy past the timeout, disk full, ...).
    public func insert(_ spec: JobSpec, submitterUid: UInt32, at: Date) throws -> Job {
        try insert([spec], submitterUid: submitterUid, at: at)[0]
    }

    /// Records several new jobs, each in the state given, in one transaction.
    ///
    /// The scheduler decides the initial state: `queued`, `waiting` (dependencies unfinished
    /// or a start time ahead), or `finished(.dependencyFailed)` when a dependency already
    /// failed. Dependencies (`spec.after`) are recorded, and each queue gets a settings row.
    /// - Parameters:
    ///   - jobs: the specs with their initial states, in order.
    ///   - submitterUid: the client's Unix uid.
    ///   - at: the submission time.
    /// - Returns: the jobs as stored, in order.
    /// - Throws: ``DatabaseError`` (a unique key already live is a constraint error); nothing
    ///   is stored then.
    public func insert(_ jobs: [(spec: JobSpec, state: JobState)], submitterUid: UInt32, at: Date) throws -> [Job] {
        try insertJobs(jobs, submitterUid: submitterUid, at: at) { _ in () }.jobs
    }

    /// Records several new jobs, as ``insert(_:submitterUid:at:)-([(JobSpec,JobState)],_,_)``
    /// does, then runs `alsoWrite` with them in the same transaction, such as the claims of
    /// the free slots they can take: one commit, not two, and the two change the same pages.
    /// - Parameters:
    ///   - jobs: the specs with their initial states, in order.
    ///   - submitterUid: the client's Unix uid.
    ///   - at: the submission time.
    ///   - alsoWrite: more writes of the same transaction, given the jobs as stored.
    /// - Returns: the jobs as stored, in order, and what `alsoWrite` returned.
    /// - Throws: ``DatabaseError``, or what `alsoWrite` throws; nothing is stored then.
    public func insert<Also>(
        _ jobs: [(spec: JobSpec, state: JobState)], submitterUid: UInt32, at: Date, alsoWrite: ([Job]) throws -> Also
    ) throws -> (jobs: [Job], also: Also) {
        try insertJobs(jobs, submitterUid: submitterUid, at: at, alsoWrite: alsoWrite)
    }

    /// Records several new jobs in one transaction: all are stored, or none.
    /// - Parameters:
    ///   - specs: what to run, in order; IDs are assigned in this order.
    ///   - submitterUid: the client's Unix uid.
    ///   - at: the submission time of all of them (stored to the microsecond).
    /// - Returns: the jobs as stored, in the order of `specs`.
    /// - Throws: ``DatabaseError``; nothing is stored then.
    public func insert(_ specs: [JobSpec], submitterUid: UInt32, at: Date) throws -> [Job] {
        try insertJobs(specs.map { ($0, JobState.queued) }, submitterUid: submitterUid, at: at) { _ in () }.jobs
    }

    private func insertJobs<Also>(
        _ specs: [(spec: JobSpec, state: JobState)], submitterUid: UInt32, at: Date, alsoWrite: ([Job]) throws -> Also
    ) throws -> (jobs: [Job], also: Also) {
        let microseconds = Timestamp.microseconds(at)
        let submittedAt = Timestamp.date(microseconds: microseconds)
        // Inside a caller's transaction the rows are not committed when this returns.
        let commits = !database.isInTransaction
        var lastEnvironment = lastStoredEnvironment
        let stored = try database.write { db in
            let dependency = try db.cachedStatement("INSERT OR IGNORE INTO job_dependencies (job_id, depends_on) VALUES (?, ?)")
            defer { dependency.reset() }
            let queueRow = try db.cachedStatement("INSERT OR IGNORE INTO queues (name) VALUES (?)")
            defer { queueRow.reset() }
            var queues: Set<QueueName> = []
            var jobs: [Job] = []
            jobs.reserveCapacity(specs.count)
            // The jobs of a batch usually share one environment, and so do the submits of one
            // shell: encode and store it once.
            func environmentID(_ spec: JobSpec) throws -> Int64 {
                if let last = lastEnvironment, JobSpec.environmentsHaveSameBytes(last.environment, spec.environment) {
                    // This dictionary from now on: the next spec of a batch shares it, and is
                    // then known without reading a byte.
                    lastEnvironment = (spec.environment, last.id)
                    return last.id
                }
                let id = try storeEnvironment(spec.environment, in: db)
                lastEnvironment = (spec.environment, id)
                return id
            }
            var next = specs.startIndex
            while next < specs.endIndex {
                let rows = Self.insertRowCounts.first { $0 <= specs.endIndex - next } ?? 1
                let chunk = specs[next ..< next + rows]
                next += rows
                var values: [DatabaseValue] = []
                values.reserveCapacity(rows * Self.insertColumns)
                for (spec, state) in chunk {
                    let argv: String?, shell: String?
                    switch spec.command {
                    case .argv(let words): (argv, shell) = (JobColumnJSON.encode(words), nil)
                    case .shell(let text): (argv, shell) = (nil, text)
                    }
                    let result = state.result
                    values += [
                        .init(spec.name), .text(spec.queue.rawValue), .init(spec.priority), .init(argv), .init(shell),
                        .text(spec.cwd), .integer(try environmentID(spec)), .text(JobColumnJSON.encode(spec.labels)),
                        .text(state.name), .init(result?.name), .init(result?.failedDependency?.rawValue),
                        result == nil ? .null : .integer(microseconds),
                        .integer(Int64(spec.maxAttempts)), .integer(Int64(submitterUid)), .integer(microseconds),
                        .init(spec.notBefore.map(Timestamp.microseconds)), .init(spec.timeoutUSec), .init(spec.uniqueKey),
                    ]
                }
                guard let sql = Self.insertSQL[rows] else { preconditionFailure("no insert statement of \(rows) rows") }
                let statement = try db.cachedStatement(sql)
                defer { statement.reset() }
                try statement.bind(values)
                var ids: [Int64] = []
                ids.reserveCapacity(rows)
                while try statement.step() { ids.append(statement.int64(at: 0)) }
                if rows == 1 { ids = [db.lastInsertRowID] }
                // RETURNING gives the rows in no promised order, but AUTOINCREMENT gives each
                // new row an ID above every ID before it: ascending IDs are the rows' order.
                ids.sort()
                for ((spec, state), rawID) in zip(chunk, ids) {
                    let id = JobID(rawValue: rawID)
                    for dependsOn in spec.after {
                        dependency.reset()
                        try dependency.bind([.integer(id.rawValue), .integer(dependsOn.rawValue)])
                        try dependency.step()
                    }
                    if queues.insert(spec.queue).inserted {
                        queueRow.reset()
                        try queueRow.bind([.text(spec.queue.rawValue)])
                        try queueRow.step()
                    }
                    let result = state.result
                    jobs.append(Job(
                        id: id, spec: spec, state: state, submittedAt: submittedAt,
                        finishedAt: result == nil ? nil : submittedAt, submitterUid: submitterUid))
                }
            }
            return (jobs, try alsoWrite(jobs))
        }
        if commits { lastStoredEnvironment = lastEnvironment }
        return stored
    }

    // MARK: - Reading

    /// The job with this ID.
    /// - Returns: the job, or `nil` when there is none (never submitted, or pruned).
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)`` when
    ///   the stored row is damaged.
    public func job(_ id: JobID) throws -> Job? {
        try select("SELECT \(Self.columns) FROM jobs WHERE id = ?", [.integer(id.rawValue)]).first?.job
    }

    /// Whether a job with this ID is stored (neither never submitted nor pruned).
    /// - Throws: ``DatabaseError``.
    public func contains(_ id: JobID) throws -> Bool {
        try database.exists("SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?1)", [.integer(id.rawValue)])
    }

    /// Whether a job finished without succeeding, from two plain columns of its row: what
    /// failing its dependents needs to know again when that takes several turns (it may have
    /// been retried meanwhile).
    /// - Returns: `nil` when there is no such job.
    /// - Throws: ``DatabaseError``.
    public func finishedUnsuccessfully(_ id: JobID) throws -> Bool? {
        try database.read { db in
            let statement = try db.cachedStatement(
                "SELECT state = 'finished' AND coalesce(result, '') <> 'succeeded' FROM jobs WHERE id = ?1")
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue)])
            guard try statement.step() else { return nil }
            return statement.int64(at: 0) != 0
        }
    }

    /// Who submitted a job and whether it has finished, from two plain columns of its row:
    /// what a wait needs to register for a job that has not ended, without decoding its
    /// command, environment and labels (the answer reads the job once it ends).
    /// - Returns: `nil` when there is no such job.
    /// - Throws: ``DatabaseError``.
    public func ownerAndProgress(_ id: JobID) throws -> (submitterUid: UInt32, isFinished: Bool)? {
        try database.read { db in
            let statement = try db.cachedStatement("SELECT submitter_uid, state = 'finished' FROM jobs WHERE id = ?1")
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue)])
            guard try statement.step() else { return nil }
            return (UInt32(truncatingIfNeeded: statement.int64(at: 0)), statement.int64(at: 1) != 0)
        }
    }

    /// Jobs matching every filter given, in ID (submission) order, for listing: their
    /// environment is not read (``JobSpec/environment`` is empty; it is not part of a listing).
    /// - Parameters:
    ///   - ids: only these jobs; `nil` for any.
    ///   - queue: only jobs of this queue; `nil` for any.
    ///   - stateName: only jobs in this state (one of ``JobState/names``; another name matches
    ///     nothing); `nil` for any.
    ///   - limit: only the newest (highest IDs) this many; `nil` for no limit.
    ///   - owner: only jobs this uid submitted; `nil` for everyone's.
    ///   - result: only finished jobs with this result; `nil` for any.
    ///   - labels: only jobs carrying every one of these labels with these values.
    /// - Returns: the matching jobs, ordered by ID.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func jobs(
        ids: [JobID]? = nil, queue: QueueName? = nil, stateName: String? = nil, limit: Int? = nil, owner: UInt32? = nil,
        result: String? = nil, labels: [String: String]? = nil
    ) throws -> [Job] {
        var conditions: [String] = []
        var values: [DatabaseValue] = []
        if let owner {
            conditions.append("submitter_uid = ?")
            values.append(.integer(Int64(owner)))
        }
        if let ids {
            conditions.append("id IN (SELECT value FROM json_each(?))")
            values.append(.text(Self.jsonArray(ids)))
        }
        if let queue {
            conditions.append("queue = ?")
            values.append(.text(queue.rawValue))
        }
        if let stateName {
            conditions.append("state = ?")
            values.append(.text(stateName))
        }
        Self.appendConditions(result: result, labels: labels, to: &conditions, values: &values)
        var sql = "SELECT \(Self.columns) FROM jobs"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        guard let limit else {
            // At most 8 distinct texts per ordering, so caching by text stays small.
            return try select(sql + " ORDER BY id", values, environment: false).map(\.job)
        }
        // The newest `limit`, read backwards along an index, then put in ID order.
        values.append(.integer(Int64(max(limit, 0))))
        return try select(sql + " ORDER BY id DESC LIMIT ?", values, environment: false).map(\.job).reversed()
    }

    /// The next queued jobs of `queue` in the order they should start: highest priority
    /// first, then lowest ID (first submitted). The scheduler takes a small window at a time.
    /// - Parameters:
    ///   - queue: the queue to look in.
    ///   - excluding: jobs to skip (e.g. already handed to the queue but not yet started).
    ///   - limit: at most this many.
    /// - Returns: up to `limit` queued jobs, in start order.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func nextQueued(in queue: QueueName, excluding: Set<JobID>, limit: Int) throws -> [Job] {
        try select(Self.nextQueuedSQL, [
            .text(queue.rawValue), .text(Self.jsonArray(excluding.sorted())), .integer(Int64(max(limit, 0))),
        ]).map(\.job)
    }

    /// Jobs recorded as running, with their process identity, for recovery at start.
    /// - Returns: one record per running job, by ID.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func runningJobs() throws -> [RunningJobRecord] {
        try select("SELECT \(Self.columns) FROM jobs WHERE state = 'running' ORDER BY id", [])
    }

    /// How many jobs are in each state.
    /// - Throws: ``DatabaseError``.
    public func counts() throws -> ManagerInterface.JobCounts {
        try database.read { db in
            // Kept by triggers (job_counts): a few rows, however many jobs there are.
            let statement = try db.cachedStatement("SELECT state, sum(count) FROM job_counts GROUP BY state")
            defer { statement.reset() }
            var counts = ManagerInterface.JobCounts()
            while try statement.step() {
                let count = statement.int(at: 1)
                switch statement.string(at: 0) {
                case "waiting": counts.waiting = count
                case "queued": counts.queued = count
                case "running": counts.running = count
                case "finished": counts.finished = count
                default: break // the CHECK constraint admits no other state
                }
            }
            return counts
        }
    }

    // MARK: - Transitions

    /// Claims a queued job for a start: state running, one more attempt, the start time, and
    /// no process yet. Committed before the process is spawned, so a daemon that dies in
    /// between leaves a running job for recovery to settle, never a queued one that would
    /// run a second time.
    /// - Returns: the job as now stored.
    /// - Throws: ``JobStoreError/noSuchJob(_:)``, ``JobStoreError/invalidTransition(_:from:to:)``
    ///   when the job is not queued, or ``DatabaseError``.
    @discardableResult
    public func claim(_ id: JobID, at: Date) throws -> Job {
        try transition(id, to: "running", sql: Self.markRunningSQL, values: [
            .integer(id.rawValue), .integer(Timestamp.microseconds(at)), .null, .null, .null,
        ])
    }

    /// Gives back a claim whose process was never spawned (the daemon is stopping): queued
    /// again, the attempt not counted.
    @discardableResult
    public func releaseClaim(_ id: JobID) throws -> Job {
        try transition(id, to: "queued", sql: """
            UPDATE jobs SET state = 'queued', attempt = attempt - 1, started_at = NULL, slurm_job_id = NULL \
            WHERE id = ?1 AND state = 'running' AND pid IS NULL RETURNING \(Self.columns)
            """, values: [.integer(id.rawValue)])
    }

    /// Records that a job ended: state finished with `result`, the finish time; the process
    /// identity is cleared. Works from waiting and queued (cancelled before it started,
    /// dependency failed) as well as from running.
    /// - Parameters:
    ///   - id: the job; it must not be finished already.
    ///   - result: how it ended.
    ///   - at: the finish time (stored to the microsecond).
    /// - Returns: the job as now stored.
    /// - Throws: ``JobStoreError/noSuchJob(_:)``, ``JobStoreError/invalidTransition(_:from:to:)``
    ///   when the job is already finished, or ``DatabaseError``.
    @discardableResult
    public func markFinished(_ id: JobID, result: JobResult, at: Date) throws -> Job {
        try database.write { db in
            try recordAttempt(id, result: result, at: at, in: db)
            return try finish(id, result: result, at: at)
        }
    }

    /// Records the ends of many jobs in one transaction (a cancel of many): each as
    /// ``markFinished(_:result:at:)`` records it, one commit for all, since a commit's cost
    /// is mostly the pages it writes and these ends share them (the job indexes,
    /// `job_counts`, the event log).
    /// - Parameters:
    ///   - ends: each job with its result.
    ///   - at: the finish time of every one (stored to the microsecond).
    /// - Returns: the jobs as now stored, in the order of `ends`, without their environments
    ///   (``JobSpec/environment`` is empty).
    /// - Throws: ``JobStoreError/noSuchJob(_:)``, ``JobStoreError/invalidTransition(_:from:to:)``
    ///   when one is finished already, or ``DatabaseError``; then none was written.
    public func markFinished(_ ends: [(id: JobID, result: JobResult)], at: Date) throws -> [Job] {
        try database.write { db in
            try ends.map { end in
                try recordAttempt(end.id, result: end.result, at: at, in: db)
                return try finish(end.id, result: end.result, at: at, environment: false)
            }
        }
    }

    private func finish(_ id: JobID, result: JobResult, at: Date, environment: Bool = true) throws -> Job {
        try transition(id, to: "finished", sql: Self.markFinishedSQL, environment: environment, values: [
            .integer(id.rawValue), .text(result.name), .init(result.exitCode.map(Int64.init)),
            .init(result.signal.map(Int64.init)), .init(result.reason), .init(result.failedDependency?.rawValue),
            .integer(Timestamp.microseconds(at)),
        ])
    }

    /// - Parameter environment: whether to read the job's environment back.
    func transition(_ id: JobID, to target: String, sql: String, environment: Bool = true, values: [DatabaseValue]) throws -> Job {
        try database.write { db in
            if let record = try select(sql, values, environment: environment).first { return record.job }
            // Nothing updated: tell a missing job from one in the wrong state.
            let statement = try db.cachedStatement("SELECT state FROM jobs WHERE id = ?")
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue)])
            guard try statement.step() else { throw JobStoreError.noSuchJob(id) }
            throw JobStoreError.invalidTransition(id, from: statement.string(at: 0) ?? "NULL", to: target)
        }
    }

    // MARK: - Rows

    /// Runs a query selecting ``columns`` and decodes every row, in one read transaction (or
    /// inside the caller's).
    /// - Parameter environment: whether to read each job's environment (to launch it);
    ///   without, ``JobSpec/environment`` is empty.
    func select(_ sql: String, _ values: [DatabaseValue], environment: Bool = true) throws -> [RunningJobRecord] {
        try database.read { db in
            let statement = try db.cachedStatement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            var records: [RunningJobRecord] = []
            while try statement.step() { records.append(try decodeJob(statement.row, environment: environment)) }
            return records
        }
    }

    // MARK: - JSON

    func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func jsonArray(_ ids: [JobID]) -> String {
        "[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"
    }
}
