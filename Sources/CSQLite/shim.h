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
