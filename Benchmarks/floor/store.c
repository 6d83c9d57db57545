/*
 * The store's floor: the SQLite work orchd asks for each job, without orchd.
 *
 *     store DATABASE N
 *
 * DATABASE is a fresh orchd database (made and migrated by orchd itself, so the schema,
 * triggers and indexes are orchd's). The program writes N jobs as orchd's scheduler does,
 * with the same statements on one connection at synchronous=NORMAL (the group commit's
 * fdatasync is left out: its CPU is the kernel's), opened with orchd's VFS as orchd opens it
 * (Sources/CSQLiteVFS: a transaction's WAL frames written at once):
 *   - submit: transactions of 1,000 jobs (SubmitBatch) in statements of 32 rows and the
 *     rest's binary digits, RETURNING the IDs (JobStore.insertSQL), sharing one environment row;
 *   - run: per job one transaction with the previous job's end (its attempt row, then
 *     state finished) and this job's claim (UPDATE ... RETURNING the row, as the scheduler
 *     decodes it), then one transaction recording its process (pid, start time, boot ID)
 *     and its started event.
 * Prints "SUBMIT_US RUN_US": microseconds of the process's CPU (user + system) per job for
 * each phase. Run under callgrind, the same work counts instructions.
 */
#include "CSQLiteVFS.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define COLUMNS \
    "id, name, queue, priority, argv, shell, cwd, environment_id, labels, state, result, exit_code, " \
    "signal, reason, failed_dependency, attempt, max_attempts, submitter_uid, submitted_at, " \
    "started_at, finished_at, pid, process_start_ticks, boot_id, not_before, timeout_usec, unique_key, held, " \
    "suspended, slurm_job_id, " \
    "(SELECT json_group_array(depends_on) FROM job_dependencies WHERE job_id = jobs.id) AS dependencies"

static sqlite3 *db;

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, NULL) != SQLITE_OK) {
        fprintf(stderr, "store: %s: %s\n", sql, sqlite3_errmsg(db));
        exit(1);
    }
    return statement;
}

/* Steps to the end, reading every column of every row as the scheduler does. */
static void run(sqlite3_stmt *statement) {
    int code;
    while ((code = sqlite3_step(statement)) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(statement); i++) {
            if (sqlite3_column_type(statement, i) == SQLITE_TEXT) sqlite3_column_text(statement, i);
            else sqlite3_column_int64(statement, i);
        }
    }
    if (code != SQLITE_DONE) {
        fprintf(stderr, "store: %s: %s\n", sqlite3_sql(statement), sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_reset(statement);
}

static double cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: store DATABASE N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    /* The library settings orchd makes before its first connection (Database.libraryConfigured). */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, 120 << 10);
    if (orchd_sqlite_vfs_register() != SQLITE_OK) {
        fprintf(stderr, "store: cannot register orchd's VFS\n");
        return 1;
    }
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, ORCHD_SQLITE_VFS_NAME) != SQLITE_OK) {
        fprintf(stderr, "store: cannot open %s\n", argv[1]);
        return 1;
    }
    sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    sqlite3_stmt *begin = prepare("BEGIN IMMEDIATE"), *commit = prepare("COMMIT");
    sqlite3_stmt *environment = prepare("INSERT INTO environments (hash, json) VALUES (1, '{\"PATH\":\"/usr/bin:/bin\"}')");
    /* JobStore.insertSQL: one statement per row count of JobStore.insertRowCounts. */
    static const int row_counts[] = {32, 16, 8, 4, 2, 1};
    sqlite3_stmt *inserts[6];
    for (int k = 0; k < 6; k++) {
        char sql[32768];
        strcpy(sql,
            "INSERT INTO jobs (name, queue, priority, argv, shell, cwd, environment_id, labels, state, result, "
            "failed_dependency, finished_at, attempt, max_attempts, submitter_uid, submitted_at, not_before, "
            "timeout_usec, unique_key) VALUES ");
        for (int r = 0; r < row_counts[k]; r++)
            strcat(sql, r ? ", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)" : "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)");
        strcat(sql, " RETURNING id");
        inserts[k] = prepare(sql);
    }
    sqlite3_stmt *claim = prepare(
        "UPDATE jobs SET state = 'running', attempt = attempt + 1, started_at = ?2, finished_at = NULL, "
        "pid = ?3, process_start_ticks = ?4, boot_id = ?5 WHERE id = ?1 AND state = 'queued' RETURNING " COLUMNS);
    sqlite3_stmt *process = prepare(
        "UPDATE jobs SET pid = ?2, process_start_ticks = ?3, boot_id = ?4 WHERE id = ?1 AND state = 'running'");
    /* JobStore.startedEventSQL: the attempt's started event, written with its process (schema v15). */
    sqlite3_stmt *started_event = prepare(
        "INSERT INTO events (at, kind, job_id, queue, state, previous_state, attempt) "
        "SELECT max(submitted_at, coalesce(started_at, 0)), 'started', id, queue, 'running', 'queued', attempt "
        "FROM jobs WHERE id = ?1 AND state = 'running'");
    sqlite3_stmt *attempt = prepare(
        "INSERT OR REPLACE INTO job_attempts (job_id, attempt, started_at, finished_at, result, exit_code, signal, reason, "
        "slurm_job_id) SELECT id, attempt, started_at, ?2, ?3, ?4, ?5, ?6, nullif(slurm_job_id, '') FROM jobs "
        "WHERE id = ?1 AND state = 'running' AND attempt > 0");
    sqlite3_stmt *finish = prepare(
        "UPDATE jobs SET state = 'finished', result = ?2, exit_code = ?3, signal = ?4, reason = ?5, "
        "failed_dependency = ?6, finished_at = ?7, pid = NULL, process_start_ticks = NULL, boot_id = NULL, held = 0, "
        "suspended = 0 WHERE id = ?1 AND state = 'running'");

    run(begin);
    run(environment);
    sqlite3_int64 environment_id = sqlite3_last_insert_rowid(db);
    run(commit);
    sqlite3_int64 first = 0;
    double started = cpu_us();
    for (int done = 0; done < n;) {
        int transaction_end = done + 1000 < n ? done + 1000 : n;
        run(begin);
        while (done < transaction_end) {
            int k = 0;
            while (row_counts[k] > transaction_end - done) k++;
            sqlite3_stmt *insert = inserts[k];
            for (int r = 0; r < row_counts[k]; r++, done++) {
                int b = r * 18;
                sqlite3_bind_null(insert, b + 1);
                sqlite3_bind_text(insert, b + 2, "default", -1, SQLITE_STATIC);
                sqlite3_bind_int64(insert, b + 3, 0);
                sqlite3_bind_text(insert, b + 4, "[\"true\"]", -1, SQLITE_STATIC);
                sqlite3_bind_null(insert, b + 5);
                sqlite3_bind_text(insert, b + 6, "/tmp", -1, SQLITE_STATIC);
                sqlite3_bind_int64(insert, b + 7, environment_id);
                sqlite3_bind_text(insert, b + 8, "{}", -1, SQLITE_STATIC);
                sqlite3_bind_text(insert, b + 9, "queued", -1, SQLITE_STATIC);
                for (int column = 10; column <= 12; column++) sqlite3_bind_null(insert, b + column);
                sqlite3_bind_int64(insert, b + 13, 1);
                sqlite3_bind_int64(insert, b + 14, 0);
                sqlite3_bind_int64(insert, b + 15, 1700000000000000LL + done);
                for (int column = 16; column <= 18; column++) sqlite3_bind_null(insert, b + column);
            }
            run(insert);
            if (first == 0) first = sqlite3_last_insert_rowid(db) - row_counts[k] + 1;
        }
        run(commit);
    }
    double submitted = cpu_us();
    for (int i = 0; i < n; i++) {
        sqlite3_int64 id = first + i;
        run(begin);
        if (i > 0) {
            sqlite3_bind_int64(attempt, 1, id - 1);
            sqlite3_bind_int64(attempt, 2, 1700000001000000LL + i);
            sqlite3_bind_text(attempt, 3, "succeeded", -1, SQLITE_STATIC);
            sqlite3_bind_int64(attempt, 4, 0);
            run(attempt);
            sqlite3_bind_int64(finish, 1, id - 1);
            sqlite3_bind_text(finish, 2, "succeeded", -1, SQLITE_STATIC);
            sqlite3_bind_int64(finish, 3, 0);
            sqlite3_bind_int64(finish, 7, 1700000001000000LL + i);
            run(finish);
            if (sqlite3_changes(db) != 1) {
                fprintf(stderr, "store: job %lld did not finish\n", (long long)(id - 1));
                return 1;
            }
        }
        sqlite3_bind_int64(claim, 1, id);
        sqlite3_bind_int64(claim, 2, 1700000001000000LL + i);
        run(claim);
        run(commit);
        run(begin);
        sqlite3_bind_int64(process, 1, id);
        sqlite3_bind_int64(process, 2, 100000 + i);
        sqlite3_bind_int64(process, 3, 5000000 + i);
        sqlite3_bind_text(process, 4, "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", -1, SQLITE_STATIC);
        run(process);
        sqlite3_bind_int64(started_event, 1, id);
        run(started_event);
        run(commit);
    }
    double ran = cpu_us();
    printf("%.1f %.1f\n", (submitted - started) / n, (ran - submitted) / n);
    sqlite3_close(db);
    return 0;
}
