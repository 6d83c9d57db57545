-- orchd's SQLite schema: what a fresh database holds after every migration in
-- Sources/Orchestrator/Store/Migrations.swift. Canonical; a test compares a fresh database
-- with the CREATE statements below (comments and whitespace aside). Times are integers in
-- microseconds since the Unix epoch (UTC).

-- v3-application-id: PRAGMA application_id = 1330791236 (0x4F524344, "ORCD"), which marks
-- the file as orchd's (DatabaseIdentity.swift); orchd refuses a database with another mark,
-- and adopts one without a mark only when it holds orchd's tables and migrations.

-- Bookkeeping of the migrator (Migrator.swift): one row per applied migration.
CREATE TABLE schema_migrations (
    name TEXT PRIMARY KEY,           -- Migration.name
    applied_at INTEGER NOT NULL      -- µs since the Unix epoch (UTC)
);

-- Environments, each stored once (v4-environments): content-addressed by a hash of the JSON,
-- referenced by jobs.environment_id; pruning deletes the ones no job refers to any more.
CREATE TABLE environments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, so a decoded copy stays right
    hash INTEGER NOT NULL,                 -- FNV-1a 64 of json (JobStore.contentHash)
    json TEXT NOT NULL CHECK (json_type(json) = 'object')  -- JSON object of strings, keys sorted
);
CREATE INDEX environments_by_hash ON environments (hash);

-- v1-jobs, rebuilt by v4-environments (environment_id instead of the environment's JSON); v7
-- added held and suspended, v8 slurm_job_id, v14 ending
CREATE TABLE "jobs" (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- the JobID; never reused, even after pruning
    name TEXT,                             -- optional display name
    queue TEXT NOT NULL,                   -- QueueName
    priority INTEGER NOT NULL DEFAULT 0,   -- higher runs first; FIFO (by id) among equals
    argv TEXT,                             -- JSON array of strings, executed without a shell
    shell TEXT,                            -- string run by /bin/sh -c
    cwd TEXT NOT NULL,                     -- absolute working directory
    environment_id INTEGER NOT NULL REFERENCES environments (id),  -- the job's environment
    labels TEXT NOT NULL DEFAULT '{}',     -- JSON object of strings, keys sorted
    state TEXT NOT NULL CHECK (state = 'waiting' OR state = 'queued' OR state = 'running' OR state = 'finished'),
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
    held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1)),  -- v7: 1: kept from starting (orchctl hold)
    suspended INTEGER NOT NULL DEFAULT 0 CHECK (suspended IN (0, 1)),  -- v7: 1: running, frozen (orchctl suspend)
    slurm_job_id TEXT,                     -- Slurm job ID of the running attempt; '' while submitting (v8)
    ending TEXT,                           -- v14: the running attempt's result, known before its processes are gone
    CHECK ((argv IS NULL) <> (shell IS NULL)),
    CHECK (argv IS NULL OR json_type(argv) = 'array'),
    CHECK (json_type(labels) = 'object'),
    CHECK ((state = 'finished') = (result IS NOT NULL))
);
-- An index entry ends with the rowid (jobs.id): ties are in ID order, and ranges of IDs are
-- searched, without naming id (v10; naming it stored it twice).
CREATE INDEX jobs_runnable ON jobs (queue, priority DESC) WHERE state = 'queued';
CREATE INDEX jobs_by_state ON jobs (state);
CREATE INDEX jobs_by_queue ON jobs (queue);
CREATE INDEX jobs_waiting ON jobs (not_before) WHERE state = 'waiting';
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state = 'finished';
CREATE UNIQUE INDEX jobs_unique_live ON jobs (submitter_uid, unique_key) WHERE unique_key IS NOT NULL AND state <> 'finished';
CREATE INDEX jobs_by_environment ON jobs (environment_id);
-- Each owner's queued jobs of a queue in start order (v6-multi-user): the scheduler hands free
-- slots to the users with queued work in turn.
CREATE INDEX jobs_runnable_by_owner ON jobs (queue, submitter_uid, priority DESC) WHERE state = 'queued';

-- Dependencies: job_id starts only after every depends_on succeeded. A row outlives a pruned
-- dependency (v2), so a retry can tell that the dependency is gone.
CREATE TABLE job_dependencies (
    job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,  -- the dependent
    depends_on INTEGER NOT NULL,           -- the dependency's JobID; kept when it is pruned
    PRIMARY KEY (job_id, depends_on)
) WITHOUT ROWID;
CREATE INDEX job_dependencies_by_dependency ON job_dependencies (depends_on, job_id);

-- How many jobs each queue has in each state (v5-job-counts), kept by the triggers below in
-- the transaction of every change, so counting never scans the jobs. Rows at 0 stay.
CREATE TABLE job_counts (
    queue TEXT NOT NULL,                   -- QueueName
    state TEXT NOT NULL,                   -- waiting, queued, running or finished
    count INTEGER NOT NULL CHECK (count >= 0),  -- jobs of the queue in the state
    PRIMARY KEY (queue, state)
) WITHOUT ROWID;
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
    slurm_job_id TEXT,                     -- Slurm job ID the attempt ran as (v8)
    PRIMARY KEY (job_id, attempt)
) WITHOUT ROWID;

-- The declared queues and their settings (v7: a queue exists exactly when it has a row here;
-- `default` always does). NULL means the daemon's default.
CREATE TABLE queues (
    name TEXT PRIMARY KEY,                 -- QueueName
    concurrency INTEGER CHECK (concurrency IS NULL OR concurrency >= 1),  -- jobs run at once
    paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),          -- 1: start nothing new
    retry_base_usec INTEGER,               -- backoff before the first retry, in µs
    retry_cap_usec INTEGER,                -- longest backoff, in µs
    hooks TEXT NOT NULL DEFAULT '{}',      -- JSON object: event kind -> command run with /bin/sh -c
    max_running_per_user INTEGER CHECK (max_running_per_user IS NULL OR max_running_per_user >= 1),  -- v6: per-user limit
    executor TEXT NOT NULL DEFAULT 'local' CHECK (executor IN ('local', 'slurm')),  -- where its jobs run (v8)
    slurm_partition TEXT,                  -- sbatch --partition; NULL: Slurm's default
    slurm_options TEXT NOT NULL DEFAULT '[]' CHECK (json_type(slurm_options) = 'array')  -- JSON array of sbatch options
) WITHOUT ROWID;

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
CREATE INDEX events_by_job ON events (job_id) WHERE job_id IS NOT NULL;  -- then by seq, the rowid (v10)
CREATE TRIGGER jobs_submitted_event AFTER INSERT ON jobs BEGIN
    INSERT INTO events (at, kind, job_id, queue, state, result, attempt)
    VALUES (NEW.submitted_at, 'submitted', NEW.id, NEW.queue, NEW.state, NEW.result, NEW.attempt);
END;
-- v7: only an attempt's end (running -> waiting) is 'retrying'; an edit that makes a queued job
-- wait is 'requeued'.
-- v15: 'started' is written when the attempt has started (JobStore.startedEventSQL), not at
-- the claim; a claim given back (running -> queued) never started and records nothing.
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
CREATE TRIGGER queues_paused_event AFTER UPDATE OF paused ON queues WHEN NEW.paused <> OLD.paused BEGIN
    INSERT INTO events (at, kind, queue)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
            CASE NEW.paused WHEN 1 THEN 'queue_paused' ELSE 'queue_resumed' END, NEW.name);
END;
