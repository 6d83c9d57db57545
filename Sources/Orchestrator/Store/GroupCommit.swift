import Dispatch
import Foundation

/// Group commit: many state changes, one `fsync`.
///
/// The connection commits each transaction with `synchronous=NORMAL`: in WAL mode such a
/// commit is atomic and survives a crash of the daemon, but not yet a power loss
/// (<https://www.sqlite.org/pragma.html#pragma_synchronous>). Durability comes from a
/// barrier: one small write committed with `synchronous=FULL`, whose WAL sync also makes every
/// earlier commit durable (<https://www.sqlite.org/wal.html>). A barrier is scheduled on the
/// owning queue after the first change of a burst, so everything already waiting on that queue
/// shares it; acknowledgements that promise durability (a submit's reply) run after it.
///
/// Confined to the queue given at creation (the scheduler's control queue).
final class GroupCommit: @unchecked Sendable {  // all state is touched only on `queue`
    private let database: Database
    private let queue: DispatchQueue
    private var barrierScheduled = false
    private var waiting: [() -> Void] = []
    /// Runs after each barrier, before the acknowledgements (the scheduler delivers the new
    /// events from the log here).
    var afterBarrier: (() -> Void)?

    /// Switches the connection to `synchronous=NORMAL` for ordinary commits. Should that
    /// fail, every commit stays `FULL`: slower, never less durable.
    init(database: Database, queue: DispatchQueue) {
        self.database = database
        self.queue = queue
        try? database.execute("PRAGMA synchronous = NORMAL")
    }

    /// Notes a committed change that must become durable soon.
    func changed() {
        scheduleBarrier()
    }

    /// Runs `work` once every change committed so far is durable.
    func afterDurable(_ work: @escaping () -> Void) {
        waiting.append(work)
        scheduleBarrier()
    }

    private func scheduleBarrier() {
        guard !barrierScheduled else { return }
        barrierScheduled = true
        queue.async { [self] in barrier() }
    }

    /// Makes every commit so far durable now (at shutdown), whether or not a barrier is due.
    func flush() {
        barrier()
    }

    /// One durable commit for the whole burst, then the acknowledgements.
    private func barrier() {
        barrierScheduled = false
        do {
            try database.execute("PRAGMA synchronous = FULL")
            try database.write { db in try db.execute("UPDATE durability_barrier SET commits = commits + 1") }
            try database.execute("PRAGMA synchronous = NORMAL")
        } catch {
            // The changes are committed and survive a daemon crash; only the sync failed.
            DaemonLog.error("cannot sync the job database to disk: \(error)")
            try? database.execute("PRAGMA synchronous = NORMAL")
        }
        afterBarrier?()
        let work = waiting
        waiting.removeAll()
        for item in work { item() }
    }
}
