#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE
   (https://www.sqlite.org/c3ref/c_dbconfig_defensive.html) set to `on` (1) or off (0). */
static inline int orchd_sqlite3_set_no_checkpoint_on_close(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, (int *)0);
}

/* sqlite3_config is variadic too (https://www.sqlite.org/c3ref/c_config_covering_index_scan.html);
   both must run before the library initializes, i.e. before the first connection opens.
   SQLITE_CONFIG_MEMSTATUS: 0 stops counting every allocation under a global mutex. */
static inline int orchd_sqlite3_config_memory_status(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}

/* SQLITE_CONFIG_STMTJRNL_SPILL: how many bytes of a statement journal stay in memory before
   it moves to a temporary file; -1 never. */
static inline int orchd_sqlite3_config_statement_journal_spill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}

/* orchd's own automatic checkpoint: SQLite's default WAL hook (sqlite3_wal_autocheckpoint)
   ignores what its checkpoint returns, so an fsync that fails there went unnoticed, and a
   later fsync of the WAL may succeed without the lost writes (Linux reports a writeback error
   once). This hook checkpoints as the default one does (PASSIVE, once the WAL holds
   `threshold` pages; https://www.sqlite.org/c3ref/wal_hook.html) and keeps the code of an
   fsync that failed in `sync_failure` for the owner to read. */
typedef struct orchd_checkpoint_state {
    int threshold;     /* WAL pages that start a checkpoint; 0: never */
    int sync_failure;  /* 0, or the extended code of the first checkpoint fsync that failed */
} orchd_checkpoint_state;

static inline int orchd_is_sync_failure(int code) {
    return code == SQLITE_IOERR_FSYNC || code == SQLITE_IOERR_DIR_FSYNC;
}

static inline int orchd_checkpoint_hook(void *context, sqlite3 *db, const char *name, int pages) {
    orchd_checkpoint_state *state = (orchd_checkpoint_state *)context;
    if (state->threshold > 0 && pages >= state->threshold) {
        int code = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, 0, 0);
        if (code != SQLITE_OK && orchd_is_sync_failure(sqlite3_extended_errcode(db)) && state->sync_failure == 0) {
            state->sync_failure = sqlite3_extended_errcode(db);
        }
    }
    return SQLITE_OK;
}

static inline void orchd_sqlite3_install_checkpoint_hook(sqlite3 *db, orchd_checkpoint_state *state) {
    sqlite3_wal_hook(db, orchd_checkpoint_hook, state);
}
