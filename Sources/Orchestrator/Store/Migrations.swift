import CSQLite

/// orchd's schema history: the migrations every orchd database goes through, in order.
///
/// Append-only. `schema.sql` at the repository root is the schema they produce, and a test
/// checks that a fresh database matches it; change both together.
public enum Migrations {
    /// The migrator with all of orchd's migrations registered.
    public static let migrator: Migrator = {
        var migrator = Migrator()
        migrator.registerMigration("v1-jobs") { db in
            try db.execute(v1JobsSQL)
            try db.execute("INSERT INTO durability_barrier (id, commits) VALUES (1, 0)")
        }
        migrator.registerMigration("v2-retry-events-kept-dependencies") { db in
            try db.execute(v2RetrySQL)
        }
        // Marks the file as orchd's (DatabaseIdentity), so that orchd never mistakes another
        // program's database for its own; also adopts a database made before the mark.
        migrator.registerMigration("v3-application-id") { db in
            try db.execute("PRAGMA application_id = \(DatabaseIdentity.applicationID)")
        }
        // Environments stored once, referenced by job rows (see v4EnvironmentsSQL).
        migrator.registerMigration("v4-environments") { db in
            try migrateToEnvironmentTable(db)
        }
        migrator.registerMigration("v5-job-counts") { db in
            try db.execute(v5JobCountsSQL)
        }
        migrator.registerMigration("v6-multi-user") { db in
            try db.execute(v6MultiUserSQL)
        }
        migrator.registerMigration("v7-declared-queues-held-suspended") { db in
            try db.execute(v7DeclaredQueuesSQL)
        }
        migrator.registerMigration("v8-executors") { db in
            try db.execute(v8ExecutorsSQL)
        }
        migrator.registerMigration("v9-unique-key-per-owner") { db in
            try db.execute(v9UniqueKeyPerOwnerSQL)
        }
        migrator.registerMigration("v10-indexes-end-with-rowid") { db in
            try db.execute(v10IndexesEndWithRowIDSQL)
        }
        // The durability barrier is an fdatasync(2) of the WAL now (GroupCommit), not a write.
        migrator.registerMigration("v11-barrier-without-write") { db in
            try db.execute("DROP TABLE durability_barrier")
        }
        migrator.registerMigration("v12-state-check-without-list") { db in
            try rewriteStateCheck(db)
        }
        migrator.registerMigration("v13-event-times-after-the-job") { db in
            try db.execute(v13EventTimesSQL)
        }
        // The result of a running attempt known before its processes are gone (a cancel or a
        // timeout under way, a main process that exited and left processes to tear down), so
        // that recovery after a crash records it rather than `interrupted` (JobStore.recordEnding).
        // An added column only: a database of the previous schema upgrades in place.
        migrator.registerMigration("v14-endings") { db in
            try db.execute("ALTER TABLE jobs ADD COLUMN ending TEXT")
        }
        migrator.registerMigration("v15-started-when-the-process-starts") { db in
            try db.execute(v15StartedEventSQL)
        }
        return migrator
    }()

    /// v12: `jobs.state`'s CHECK as four comparisons instead of `state IN (...)`. SQLite codes
    /// an `IN` list of more than two values as a temporary index it builds at every execution,
    /// i.e. a temporary b-tree opened and filled at every insert and every change of state: a
    /// fifth of SQLite's instructions for a job's insert, claim and end (`floor/store.c` under
    /// callgrind: 475,000 → 389,000 a job). The rows are unchanged and satisfy both forms, so
    /// the table's text is edited in place, as SQLite documents for a change of constraints
    /// that leaves the stored format alone (<https://www.sqlite.org/lang_altertable.html#otheralter>);
    /// a rebuild of `jobs` would copy every row and index at the upgrade.
    /// - Throws: ``DatabaseError`` when the table does not have v4's CHECK text to rewrite, or
    ///   when SQLite refuses the edit; the migration's transaction then rolls back.
    static func rewriteStateCheck(_ db: Database) throws {
        let version = try db.makeStatement("PRAGMA schema_version")
        guard try version.step() else {
            throw DatabaseError(code: SQLITE_ERROR, message: "PRAGMA schema_version returned no row", sql: "PRAGMA schema_version")
        }
        let schemaVersion = version.int64(at: 0)
        version.reset()
        try db.execute("PRAGMA writable_schema = ON")
        defer { try? db.execute("PRAGMA writable_schema = OFF") }
        let rewrite = try db.makeStatement(
            "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE type = 'table' AND name = 'jobs' AND instr(sql, ?1) > 0")
        try rewrite.bind([.text(stateCheckV4), .text(stateCheckV12)])
        try rewrite.step()
        rewrite.reset()
        guard db.changes == 1 else {
            throw DatabaseError(code: SQLITE_ERROR, message: "the jobs table has no \(stateCheckV4) to rewrite", sql: nil)
        }
        // A new schema version makes every connection, this one too, read the schema again.
        try db.execute("PRAGMA schema_version = \(schemaVersion + 1)")
    }

    static let stateCheckV4 = "CHECK (state IN ('waiting', 'queued', 'running', 'finished'))"
    static let stateCheckV12 = "CHECK (state = 'waiting' OR state = 'queued' OR state = 'running' OR state = 'finished')"

    /// v10: every index entry ends with the row's rowid already, and `jobs.id` and
    /// `events.seq` are the rowid: the indexes that named it last stored it twice (about 14
    /// of the 240 bytes a queued job took). Without it they keep the same order (ties by
    /// rowid, ascending), and SQLite still searches ranges of it (`rowid>? AND rowid<?`), so
    /// every query keeps its plan.
    static let v10IndexesEndWithRowIDSQL = """
        DROP INDEX jobs_runnable;
        CREATE INDEX jobs_runnable ON jobs (queue, priority DESC) WHERE state = 'queued';
        DROP INDEX jobs_runnable_by_owner;
        CREATE INDEX jobs_runnable_by_owner ON jobs (queue, submitter_uid, priority DESC) WHERE state = 'queued';
        DROP INDEX jobs_by_state;
        CREATE INDEX jobs_by_state ON jobs (state);
        DROP INDEX jobs_by_queue;
        CREATE INDEX jobs_by_queue ON jobs (queue);
        DROP INDEX events_by_job;
        CREATE INDEX events_by_job ON events (job_id) WHERE job_id IS NOT NULL;
        """

    /// v9: a unique key is each user's own (one live job per owner and key): on a shared
    /// machine one user's `--unique nightly` must not refuse another's.
    static let v9UniqueKeyPerOwnerSQL = """
        DROP INDEX jobs_unique_live;
        CREATE UNIQUE INDEX jobs_unique_live ON jobs (submitter_uid, unique_key) WHERE unique_key IS NOT NULL AND state <> 'finished';
        """

    /// v6: a queue's limit of running jobs per user, and the queued jobs of a queue by owner,
    /// in start order, so that the scheduler finds each user's next job (and which users have
    /// queued work) without reading the queue: it hands free slots to users in turn.
    static let v6MultiUserSQL = """
        ALTER TABLE queues ADD COLUMN max_running_per_user INTEGER CHECK (max_running_per_user IS NULL OR max_running_per_user >= 1);
        CREATE INDEX jobs_runnable_by_owner ON jobs (queue, submitter_uid, priority DESC, id) WHERE state = 'queued';
        """

    /// v7: queues are declared (a row in `queues`), no longer made by the first job that names
    /// one; the queues that already have jobs, and `default`, are declared. A job may be held
    /// (kept from starting while queued or waiting) and, while running, suspended (frozen).
    /// An edit can now move a queued job back to waiting: only an attempt's end is `retrying`
    /// (that event runs hooks), so the state trigger says so.
    static let v7DeclaredQueuesSQL = """
        ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1));
        ALTER TABLE jobs ADD COLUMN suspended INTEGER NOT NULL DEFAULT 0 CHECK (suspended IN (0, 1));
        INSERT OR IGNORE INTO queues (name) SELECT DISTINCT queue FROM job_counts;
        INSERT OR IGNORE INTO queues (name) VALUES ('default');
        DROP TRIGGER jobs_state_event;
        CREATE TRIGGER jobs_state_event AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, previous_state, result, exit_code, signal, attempt)
            SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
                CASE
                    WHEN NEW.state = 'running' THEN 'started'
                    WHEN NEW.state = 'finished' AND NEW.result = 'cancelled' THEN 'cancelled'
                    WHEN NEW.state = 'finished' THEN 'finished'
                    WHEN OLD.state = 'finished' THEN 'requeued'
                    WHEN NEW.state = 'waiting' AND OLD.state = 'running' THEN 'retrying'
                    WHEN OLD.state = 'waiting' THEN 'queued'
                    ELSE 'requeued'
                END,
                NEW.id, NEW.queue, NEW.state, OLD.state,
                coalesce(NEW.result, a.result), coalesce(NEW.exit_code, a.exit_code), coalesce(NEW.signal, a.signal), NEW.attempt
            FROM (SELECT 1) LEFT JOIN job_attempts a
                ON NEW.state = 'waiting' AND OLD.state = 'running' AND a.job_id = NEW.id AND a.attempt = NEW.attempt;
        END;
        """

    /// v13: a job's state event is never dated before the job's own times. The trigger dated
    /// it with `julianday('now')`, which SQLite keeps to the millisecond, while orchd stamps
    /// `submitted_at` and `started_at` to the microsecond: a job started within the
    /// millisecond it was submitted got a `started` event up to 1 ms before its `submitted`
    /// event. The time is now the latest of that, `submitted_at` and `started_at`.
    static let v13EventTimesSQL = """
        DROP TRIGGER jobs_state_event;
        CREATE TRIGGER jobs_state_event AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, previous_state, result, exit_code, signal, attempt)
            SELECT max(CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER), NEW.submitted_at, coalesce(NEW.started_at, 0)),
                CASE
                    WHEN NEW.state = 'running' THEN 'started'
                    WHEN NEW.state = 'finished' AND NEW.result = 'cancelled' THEN 'cancelled'
                    WHEN NEW.state = 'finished' THEN 'finished'
                    WHEN OLD.state = 'finished' THEN 'requeued'
                    WHEN NEW.state = 'waiting' AND OLD.state = 'running' THEN 'retrying'
                    WHEN OLD.state = 'waiting' THEN 'queued'
                    ELSE 'requeued'
                END,
                NEW.id, NEW.queue, NEW.state, OLD.state,
                coalesce(NEW.result, a.result), coalesce(NEW.exit_code, a.exit_code), coalesce(NEW.signal, a.signal), NEW.attempt
            FROM (SELECT 1) LEFT JOIN job_attempts a
                ON NEW.state = 'waiting' AND OLD.state = 'running' AND a.job_id = NEW.id AND a.attempt = NEW.attempt;
        END;
        """

    /// v15: `started` is recorded when the attempt has started (its process spawned, or
    /// Slurm took the job: ``JobStore/startedEventSQL``), no longer by this trigger at the
    /// claim. A claim is only the reservation of a slot; a launch sent back for want of
    /// descriptors, or a claim given back at a stop, never started anything, and its
    /// `started` event ran the queue's `started` hook for nothing. A claim given back
    /// (running → queued) therefore records no event either.
    static let v15StartedEventSQL = """
        DROP TRIGGER jobs_state_event;
        CREATE TRIGGER jobs_state_event AFTER UPDATE OF state ON jobs
            WHEN NEW.state <> OLD.state AND NEW.state <> 'running' AND NOT (OLD.state = 'running' AND NEW.state = 'queued') BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, previous_state, result, exit_code, signal, attempt)
            SELECT max(CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER), NEW.submitted_at, coalesce(NEW.started_at, 0)),
                CASE
                    WHEN NEW.state = 'finished' AND NEW.result = 'cancelled' THEN 'cancelled'
                    WHEN NEW.state = 'finished' THEN 'finished'
                    WHEN OLD.state = 'finished' THEN 'requeued'
                    WHEN NEW.state = 'waiting' AND OLD.state = 'running' THEN 'retrying'
                    WHEN OLD.state = 'waiting' THEN 'queued'
                    ELSE 'requeued'
                END,
                NEW.id, NEW.queue, NEW.state, OLD.state,
                coalesce(NEW.result, a.result), coalesce(NEW.exit_code, a.exit_code), coalesce(NEW.signal, a.signal), NEW.attempt
            FROM (SELECT 1) LEFT JOIN job_attempts a
                ON NEW.state = 'waiting' AND OLD.state = 'running' AND a.job_id = NEW.id AND a.attempt = NEW.attempt;
        END;
        """

    /// v8: where a queue's jobs run (`queues.executor`, with a slurm queue's partition and
    /// sbatch options), and the Slurm job ID of a running attempt (`jobs.slurm_job_id`: `''`
    /// from just before `sbatch` runs until its ID is recorded, so that recovery after a crash
    /// looks for a job submitted but not recorded) and of each ended one
    /// (`job_attempts.slurm_job_id`). Added columns only: a database of the previous schema
    /// upgrades in place, and every existing queue stays local.
    static let v8ExecutorsSQL = """
        ALTER TABLE jobs ADD COLUMN slurm_job_id TEXT;            -- Slurm job ID of the running attempt; '' while submitting
        ALTER TABLE job_attempts ADD COLUMN slurm_job_id TEXT;    -- Slurm job ID the attempt ran as
        ALTER TABLE queues ADD COLUMN executor TEXT NOT NULL DEFAULT 'local' CHECK (executor IN ('local', 'slurm'));
        ALTER TABLE queues ADD COLUMN slurm_partition TEXT;       -- sbatch --partition; NULL: Slurm's default
        ALTER TABLE queues ADD COLUMN slurm_options TEXT NOT NULL DEFAULT '[]' CHECK (json_type(slurm_options) = 'array');
        """

    /// v5: how many jobs each queue has in each state, kept by triggers in the transaction
    /// of every change, so that start-up and `orchctl info` read a few rows instead of
    /// counting every job (a `GROUP BY` over a million jobs took most of a second). Rows
    /// whose count fell to 0 stay.
    static let v5JobCountsSQL = """
        CREATE TABLE job_counts (
            queue TEXT NOT NULL,                   -- QueueName
            state TEXT NOT NULL,                   -- waiting, queued, running or finished
            count INTEGER NOT NULL CHECK (count >= 0),  -- jobs of the queue in the state
            PRIMARY KEY (queue, state)
        ) WITHOUT ROWID;
        INSERT INTO job_counts (queue, state, count) SELECT queue, state, count(*) FROM jobs GROUP BY queue, state;
        CREATE TRIGGER jobs_counted_insert AFTER INSERT ON jobs BEGIN
            INSERT INTO job_counts (queue, state, count) VALUES (NEW.queue, NEW.state, 1)
                ON CONFLICT (queue, state) DO UPDATE SET count = count + 1;
        END;
        CREATE TRIGGER jobs_counted_delete AFTER DELETE ON jobs BEGIN
            UPDATE job_counts SET count = count - 1 WHERE queue = OLD.queue AND state = OLD.state;
        END;
        CREATE TRIGGER jobs_counted_update AFTER UPDATE OF queue, state ON jobs
            WHEN NEW.state <> OLD.state OR NEW.queue <> OLD.queue BEGIN
            UPDATE job_counts SET count = count - 1 WHERE queue = OLD.queue AND state = OLD.state;
            INSERT INTO job_counts (queue, state, count) VALUES (NEW.queue, NEW.state, 1)
                ON CONFLICT (queue, state) DO UPDATE SET count = count + 1;
        END;
        """

    /// v4: each distinct environment once, in `environments`, content-addressed by a hash of
    /// its JSON; `jobs.environment` becomes `jobs.environment_id`. A few KiB of environment
    /// in every job row made a million queued jobs take gigabytes, and every read and write
    /// of a job carry them. SQLite cannot drop a column named in a CHECK constraint, so
    /// `jobs` is rebuilt (<https://www.sqlite.org/lang_altertable.html#otheralter>), with
    /// foreign keys off meanwhile (``Migrator`` does that) so that dropping the old table
    /// cascades to nothing; its indexes and triggers are made again, unchanged.
    static func migrateToEnvironmentTable(_ db: Database) throws {
        try db.execute("""
            CREATE TABLE environments (
                id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, so a decoded copy stays right
                hash INTEGER NOT NULL,                 -- FNV-1a 64 of json (JobStore.contentHash)
                json TEXT NOT NULL CHECK (json_type(json) = 'object')  -- JSON object of strings, keys sorted
            );
            CREATE INDEX environments_by_hash ON environments (hash);
            """)
        // The hash is computed here, not in SQL: the same function as at insert.
        let distinct = try db.makeStatement("SELECT DISTINCT environment FROM jobs")
        let add = try db.makeStatement("INSERT INTO environments (hash, json) VALUES (?1, ?2)")
        while try distinct.step() {
            let text = distinct.string(at: 0) ?? "{}"
            add.reset()
            try add.bind([.integer(JobStore.contentHash(text)), .text(text)])
            try add.step()
        }
        // Keep the largest job ID ever used: dropping the table drops its sqlite_sequence row.
        let sequence = try db.makeStatement("SELECT seq FROM sqlite_sequence WHERE name = 'jobs'")
        let lastID = try sequence.step() ? sequence.int64(at: 0) : 0
        // A statement still open on a table keeps it from being dropped.
        for statement in [distinct, add, sequence] { statement.reset() }
        try db.execute(v4EnvironmentsSQL)
        try db.execute("DELETE FROM sqlite_sequence WHERE name = 'jobs'")
        try db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('jobs', max(\(lastID), coalesce((SELECT max(id) FROM jobs), 0)))")
    }

    /// v4's rebuild of `jobs`, after `environments` is filled.
    static let v4EnvironmentsSQL = """
        CREATE TABLE jobs_v4 (
            id INTEGER PRIMARY KEY AUTOINCREMENT,  -- the JobID; never reused, even after pruning
            name TEXT,                             -- optional display name
            queue TEXT NOT NULL,                   -- QueueName
            priority INTEGER NOT NULL DEFAULT 0,   -- higher runs first; FIFO (by id) among equals
            argv TEXT,                             -- JSON array of strings, executed without a shell
            shell TEXT,                            -- string run by /bin/sh -c
            cwd TEXT NOT NULL,                     -- absolute working directory
            environment_id INTEGER NOT NULL REFERENCES environments (id),  -- the job's environment
            labels TEXT NOT NULL DEFAULT '{}',     -- JSON object of strings, keys sorted
            state TEXT NOT NULL CHECK (state IN ('waiting', 'queued', 'running', 'finished')),
            result TEXT,                           -- JobResult.name, set exactly when finished
            exit_code INTEGER,                     -- exit status 0-255, for succeeded and failed
            signal INTEGER,                        -- signal number, for signaled
            reason TEXT,                           -- why the spawn failed, for spawn_failed
            failed_dependency INTEGER,             -- JobID, for dependency_failed
            attempt INTEGER NOT NULL DEFAULT 0,    -- attempts started, from 1; 0 before the first
            max_attempts INTEGER NOT NULL DEFAULT 1, -- attempts allowed in all; 1 = no retry
            submitter_uid INTEGER NOT NULL,        -- Unix uid of the submitting client (SO_PEERCRED)
            submitted_at INTEGER NOT NULL,         -- µs since the Unix epoch (UTC)
            started_at INTEGER,                    -- µs since the Unix epoch, start of the last attempt
            finished_at INTEGER,                   -- µs since the Unix epoch
            pid INTEGER,                           -- main process (and process group) ID while running
            process_start_ticks INTEGER,           -- its start time, clock ticks after boot (/proc/PID/stat field 22)
            boot_id TEXT,                          -- /proc/sys/kernel/random/boot_id of the boot it ran in
            not_before INTEGER,                    -- µs since the Unix epoch: earliest start (delay, --at, retry backoff)
            timeout_usec INTEGER,                  -- run time limit of one attempt, in µs from its start
            unique_key TEXT,                       -- at most one job per key that is not finished
            CHECK ((argv IS NULL) <> (shell IS NULL)),
            CHECK (argv IS NULL OR json_type(argv) = 'array'),
            CHECK (json_type(labels) = 'object'),
            CHECK ((state = 'finished') = (result IS NOT NULL))
        );
        INSERT INTO jobs_v4 (id, name, queue, priority, argv, shell, cwd, environment_id, labels, state, result, exit_code,
            signal, reason, failed_dependency, attempt, max_attempts, submitter_uid, submitted_at, started_at, finished_at,
            pid, process_start_ticks, boot_id, not_before, timeout_usec, unique_key)
        SELECT j.id, j.name, j.queue, j.priority, j.argv, j.shell, j.cwd, e.id, j.labels, j.state, j.result, j.exit_code,
            j.signal, j.reason, j.failed_dependency, j.attempt, j.max_attempts, j.submitter_uid, j.submitted_at, j.started_at,
            j.finished_at, j.pid, j.process_start_ticks, j.boot_id, j.not_before, j.timeout_usec, j.unique_key
        FROM jobs j JOIN environments e ON e.json = j.environment;
        DROP TABLE jobs;
        ALTER TABLE jobs_v4 RENAME TO jobs;
        CREATE INDEX jobs_runnable ON jobs (queue, priority DESC, id) WHERE state = 'queued';
        CREATE INDEX jobs_by_state ON jobs (state, id);
        CREATE INDEX jobs_by_queue ON jobs (queue, id);
        CREATE INDEX jobs_waiting ON jobs (not_before) WHERE state = 'waiting';
        CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state = 'finished';
        CREATE UNIQUE INDEX jobs_unique_live ON jobs (unique_key) WHERE unique_key IS NOT NULL AND state <> 'finished';
        CREATE INDEX jobs_by_environment ON jobs (environment_id);
        CREATE TRIGGER jobs_submitted_event AFTER INSERT ON jobs BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, result, attempt)
            VALUES (NEW.submitted_at, 'submitted', NEW.id, NEW.queue, NEW.state, NEW.result, NEW.attempt);
        END;
        CREATE TRIGGER jobs_state_event AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, previous_state, result, exit_code, signal, attempt)
            SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
                CASE
                    WHEN NEW.state = 'running' THEN 'started'
                    WHEN NEW.state = 'finished' AND NEW.result = 'cancelled' THEN 'cancelled'
                    WHEN NEW.state = 'finished' THEN 'finished'
                    WHEN OLD.state = 'finished' THEN 'requeued'
                    WHEN NEW.state = 'waiting' THEN 'retrying'
                    WHEN OLD.state = 'waiting' THEN 'queued'
                    ELSE 'requeued'
                END,
                NEW.id, NEW.queue, NEW.state, OLD.state,
                coalesce(NEW.result, a.result), coalesce(NEW.exit_code, a.exit_code), coalesce(NEW.signal, a.signal), NEW.attempt
            FROM (SELECT 1) LEFT JOIN job_attempts a
                ON NEW.state = 'waiting' AND OLD.state = 'running' AND a.job_id = NEW.id AND a.attempt = NEW.attempt;
        END;
        """

    /// v1: the `jobs` table with its indexes, dependencies, attempts and queue settings, as first released (v2 changes the state trigger and `job_dependencies`).
    ///
    /// `AUTOINCREMENT` makes SQLite remember the largest ID ever used (in `sqlite_sequence`),
    /// so a pruned job's ID is never handed out again (<https://www.sqlite.org/autoinc.html>).
    /// `jobs_runnable` is a partial index over queued jobs only, in the order the scheduler
    /// takes them (<https://www.sqlite.org/partialindex.html>).
    static let v1JobsSQL = """
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,  -- the JobID; never reused, even after pruning
            name TEXT,                             -- optional display name
            queue TEXT NOT NULL,                   -- QueueName
            priority INTEGER NOT NULL DEFAULT 0,   -- higher runs first; FIFO (by id) among equals
            argv TEXT,                             -- JSON array of strings, executed without a shell
            shell TEXT,                            -- string run by /bin/sh -c
            cwd TEXT NOT NULL,                     -- absolute working directory
            environment TEXT NOT NULL,             -- JSON object of strings, keys sorted
            labels TEXT NOT NULL DEFAULT '{}',     -- JSON object of strings, keys sorted
            state TEXT NOT NULL CHECK (state IN ('waiting', 'queued', 'running', 'finished')),
            result TEXT,                           -- JobResult.name, set exactly when finished
            exit_code INTEGER,                     -- exit status 0-255, for succeeded and failed
            signal INTEGER,                        -- signal number, for signaled
            reason TEXT,                           -- why the spawn failed, for spawn_failed
            failed_dependency INTEGER,             -- JobID, for dependency_failed
            attempt INTEGER NOT NULL DEFAULT 0,    -- attempts started, from 1; 0 before the first
            max_attempts INTEGER NOT NULL DEFAULT 1, -- attempts allowed in all; 1 = no retry
            submitter_uid INTEGER NOT NULL,        -- Unix uid of the submitting client (SO_PEERCRED)
            submitted_at INTEGER NOT NULL,         -- µs since the Unix epoch (UTC)
            started_at INTEGER,                    -- µs since the Unix epoch, start of the last attempt
            finished_at INTEGER,                   -- µs since the Unix epoch
            pid INTEGER,                           -- main process (and process group) ID while running
            process_start_ticks INTEGER,           -- its start time, clock ticks after boot (/proc/PID/stat field 22)
            boot_id TEXT,                          -- /proc/sys/kernel/random/boot_id of the boot it ran in
            not_before INTEGER,                    -- µs since the Unix epoch: earliest start (delay, --at, retry backoff)
            timeout_usec INTEGER,                  -- run time limit of one attempt, in µs from its start
            unique_key TEXT,                       -- at most one job per key that is not finished
            CHECK ((argv IS NULL) <> (shell IS NULL)),
            CHECK (argv IS NULL OR json_type(argv) = 'array'),
            CHECK (json_type(environment) = 'object' AND json_type(labels) = 'object'),
            CHECK ((state = 'finished') = (result IS NOT NULL))
        );
        CREATE INDEX jobs_runnable ON jobs (queue, priority DESC, id) WHERE state = 'queued';
        CREATE INDEX jobs_by_state ON jobs (state, id);
        CREATE INDEX jobs_by_queue ON jobs (queue, id);
        CREATE INDEX jobs_waiting ON jobs (not_before) WHERE state = 'waiting';
        CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state = 'finished';
        CREATE UNIQUE INDEX jobs_unique_live ON jobs (unique_key) WHERE unique_key IS NOT NULL AND state <> 'finished';

        -- Dependencies: job_id starts only after every depends_on succeeded.
        CREATE TABLE job_dependencies (
            job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,      -- the dependent
            depends_on INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,  -- the dependency
            PRIMARY KEY (job_id, depends_on)
        ) WITHOUT ROWID;
        CREATE INDEX job_dependencies_by_dependency ON job_dependencies (depends_on, job_id);

        -- One row per ended attempt of a job that started.
        CREATE TABLE job_attempts (
            job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
            attempt INTEGER NOT NULL,              -- from 1
            started_at INTEGER,                    -- µs since the Unix epoch
            finished_at INTEGER NOT NULL,          -- µs since the Unix epoch
            result TEXT NOT NULL,                  -- JobResult.name
            exit_code INTEGER,
            signal INTEGER,
            reason TEXT,
            PRIMARY KEY (job_id, attempt)
        ) WITHOUT ROWID;

        -- Queue settings; a queue gets a row when first used. NULL means the daemon's default.
        CREATE TABLE queues (
            name TEXT PRIMARY KEY,                 -- QueueName
            concurrency INTEGER CHECK (concurrency IS NULL OR concurrency >= 1),  -- jobs run at once
            paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),          -- 1: start nothing new
            retry_base_usec INTEGER,               -- backoff before the first retry, in µs
            retry_cap_usec INTEGER,                -- longest backoff, in µs
            hooks TEXT NOT NULL DEFAULT '{}'       -- JSON object: event kind -> command run with /bin/sh -c
        ) WITHOUT ROWID;

        -- One row, updated by each group commit's durable barrier (GroupCommit.swift).
        CREATE TABLE durability_barrier (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            commits INTEGER NOT NULL               -- barriers committed so far
        );

        -- The event log: every lifecycle change, numbered, written by the triggers below in the same
        -- transaction as the change itself. Pruned to a bounded number of rows.
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, -- Event.seq; never reused
            at INTEGER NOT NULL,                   -- µs since the Unix epoch (UTC)
            kind TEXT NOT NULL,                    -- submitted, queued, started, retrying, requeued, finished, cancelled,
                                                   -- queue_paused, queue_resumed, queue_drained, daemon_ready, daemon_stopping
            job_id INTEGER,                        -- no foreign key: events outlive pruned jobs
            queue TEXT,
            state TEXT,                            -- the job's state after the event
            previous_state TEXT,
            result TEXT,
            exit_code INTEGER,
            signal INTEGER,
            attempt INTEGER
        );
        CREATE INDEX events_by_job ON events (job_id, seq) WHERE job_id IS NOT NULL;
        CREATE TRIGGER jobs_submitted_event AFTER INSERT ON jobs BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, result, attempt)
            VALUES (NEW.submitted_at, 'submitted', NEW.id, NEW.queue, NEW.state, NEW.result, NEW.attempt);
        END;
        CREATE TRIGGER jobs_state_event AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, previous_state, result, exit_code, signal, attempt)
            SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
                CASE
                    WHEN NEW.state = 'running' THEN 'started'
                    WHEN NEW.state = 'finished' AND NEW.result = 'cancelled' THEN 'cancelled'
                    WHEN NEW.state = 'finished' THEN 'finished'
                    WHEN NEW.state = 'waiting' THEN 'retrying'
                    WHEN OLD.state = 'waiting' THEN 'queued'
                    ELSE 'requeued'
                END,
                NEW.id, NEW.queue, NEW.state, OLD.state,
                coalesce(NEW.result, a.result), coalesce(NEW.exit_code, a.exit_code), coalesce(NEW.signal, a.signal), NEW.attempt
            FROM (SELECT 1) LEFT JOIN job_attempts a ON NEW.state = 'waiting' AND a.job_id = NEW.id AND a.attempt = NEW.attempt;
        END;
        CREATE TRIGGER queues_paused_event AFTER UPDATE OF paused ON queues WHEN NEW.paused <> OLD.paused BEGIN
            INSERT INTO events (at, kind, queue)
            VALUES (CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
                    CASE NEW.paused WHEN 1 THEN 'queue_paused' ELSE 'queue_resumed' END, NEW.name);
        END;
        """

    /// v2: `orchctl retry` may put a finished job back to waiting (for a dependency or its
    /// start time), so the state trigger names finished → waiting `requeued`, not `retrying`
    /// (which is an attempt that ended with a retry left). And a dependency row outlives the
    /// pruned dependency (no cascade on `depends_on`), so a finished job still names what it
    /// waited for and a retry can tell that a dependency is gone. SQLite cannot alter a
    /// foreign key, so the table is rebuilt (<https://www.sqlite.org/lang_altertable.html>).
    static let v2RetrySQL = """
        DROP TRIGGER jobs_state_event;
        CREATE TRIGGER jobs_state_event AFTER UPDATE OF state ON jobs WHEN NEW.state <> OLD.state BEGIN
            INSERT INTO events (at, kind, job_id, queue, state, previous_state, result, exit_code, signal, attempt)
            SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
                CASE
                    WHEN NEW.state = 'running' THEN 'started'
                    WHEN NEW.state = 'finished' AND NEW.result = 'cancelled' THEN 'cancelled'
                    WHEN NEW.state = 'finished' THEN 'finished'
                    WHEN OLD.state = 'finished' THEN 'requeued'
                    WHEN NEW.state = 'waiting' THEN 'retrying'
                    WHEN OLD.state = 'waiting' THEN 'queued'
                    ELSE 'requeued'
                END,
                NEW.id, NEW.queue, NEW.state, OLD.state,
                coalesce(NEW.result, a.result), coalesce(NEW.exit_code, a.exit_code), coalesce(NEW.signal, a.signal), NEW.attempt
            FROM (SELECT 1) LEFT JOIN job_attempts a
                ON NEW.state = 'waiting' AND OLD.state = 'running' AND a.job_id = NEW.id AND a.attempt = NEW.attempt;
        END;
        CREATE TEMP TABLE saved_dependencies AS SELECT job_id, depends_on FROM job_dependencies;
        DROP TABLE job_dependencies;
        CREATE TABLE job_dependencies (
            job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,  -- the dependent
            depends_on INTEGER NOT NULL,           -- the dependency's JobID; kept when it is pruned
            PRIMARY KEY (job_id, depends_on)
        ) WITHOUT ROWID;
        INSERT INTO job_dependencies (job_id, depends_on) SELECT job_id, depends_on FROM saved_dependencies;
        DROP TABLE saved_dependencies;
        CREATE INDEX job_dependencies_by_dependency ON job_dependencies (depends_on, job_id);
        """
}
