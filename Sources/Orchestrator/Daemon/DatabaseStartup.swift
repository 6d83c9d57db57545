import Dispatch
import Glibc

/// The job database at start-up: opened only when it is orchd's and passes its integrity
/// check (`DatabaseIdentity.verify`), with its file's mode narrowed to the daemon's user; a
/// check that runs out of its start-up budget is finished in the background once the daemon
/// serves.
enum DatabaseStartup {
    /// Opens the job database, creating it when missing.
    /// - Parameter path: the database file, `<state dir>/orchd.db`.
    /// - Returns: the store, and whether `PRAGMA quick_check` finished within
    ///   `DatabaseIdentity.startupCheckBudget` (if not, call ``checkInBackground(_:)`` once
    ///   ready).
    /// - Throws: ``Daemon/StartupFailure`` (errno `EIO`): DatabaseIdentity's one line when the
    ///   file is not orchd's, not SQLite, or damaged; ``DatabaseOpenFailure``'s otherwise.
    static func open(path: String) throws(Daemon.StartupFailure) -> (store: JobStore, checkedCompletely: Bool) {
        let store: JobStore
        var checkedCompletely = true  // set by the verify closure, on this thread, before it is read
        do {
            // Before SQLite opens anything: it would replay a stray -wal into the file.
            try DatabaseIdentity.checkFiles(atPath: path)
            try DatabaseFileMode.restrict(path)
            store = try JobStore(database: try Database(path: path) { db throws(DatabaseError) in
                checkedCompletely = try DatabaseIdentity.verify(db, checkBudget: DatabaseIdentity.startupCheckBudget)
            })
        } catch let error as DatabaseError where error.isCorrupt {
            // Not orchd's, not SQLite, or damaged: DatabaseIdentity's one line says which and what to do.
            throw Daemon.StartupFailure(error.message, errno: EIO)
        } catch {
            throw Daemon.StartupFailure(DatabaseOpenFailure.message(path: path, error: error), errno: EIO)
        }
        DatabaseFileMode.restrictCompanions(path)
        // A copy: the variable is the verify closure's, which the store (the scheduler's from
        // then on) keeps.
        let checkedAll = checkedCompletely
        return (store, checkedAll)
    }

    /// Finishes the start-up `quick_check` that ran out of its budget, on a connection of its
    /// own off the control queue. The daemon already serves, so damage found here is logged
    /// with the way out (as at start-up); SQLite reports damaged pages to every later
    /// statement that reads them too.
    static func checkInBackground(_ path: String) {
        DaemonLog.info("the database is large: its integrity check goes on in the background")
        DispatchQueue.global(qos: .utility).async {
            do {
                let db = try Database(path: path)
                try DatabaseIdentity.quickCheck(db, budget: nil)
                DaemonLog.info("the database passed its integrity check (PRAGMA quick_check)")
            } catch let error as DatabaseError where error.isCorrupt {
                DaemonLog.error(error.message)
            } catch {
                DaemonLog.warning("cannot finish the database's integrity check: \(error)")
            }
        }
    }
}
