import Dispatch
import Glibc
import Foundation
import Synchronization

/// Group commit: many state changes, one `fsync`.
///
/// The connection commits each transaction with `synchronous=NORMAL`: in WAL mode such a
/// commit is atomic and survives a crash of the daemon, but not yet a power loss
/// (<https://www.sqlite.org/pragma.html#pragma_synchronous>). Durability comes from a
/// barrier: one small write committed with `synchronous=FULL`, whose WAL sync also makes every
/// earlier commit durable, whichever connection made it (<https://www.sqlite.org/wal.html>).
///
/// The barrier runs on a second connection on its own queue, so the owning queue (the
/// scheduler's control queue) goes on working during the `fsync`; changes made meanwhile
/// share the next barrier. A barrier starts after the burst of work already waiting on the
/// owning queue, and at most one is in flight. Acknowledgements that promise durability (a
/// submit's reply) run once a barrier that started after them has finished.
///
/// Under ``SyncPolicy/interval(_:)`` they run once committed, in the next turn of the owning
/// queue (events first, as after a barrier), and a timer starts a barrier at most the
/// interval after the first change it covers.
///
/// Not `Sendable`: owned by an actor on the owning queue (the ``Scheduler``), which calls it
/// there; its own later turns re-enter it through ``reenter``, i.e. through that actor.
final class GroupCommit {
    /// Runs `work` with this group commit, isolated to its owner; called on the owning queue.
    typealias Reenter = @Sendable (_ work: @escaping @Sendable (GroupCommit) -> Void) -> Void

    private let database: Database
    private let queue: DispatchQueue
    /// The barrier's own connection to the same file, used on `syncQueue` only; `nil` when it
    /// could not be opened, and then barriers run on `queue` through `database`.
    private let syncConnection: SyncConnection?
    private let syncQueue = DispatchQueue(label: "orchd.group-commit")
    /// When acknowledgements may go out: after a barrier, or once committed.
    let policy: SyncPolicy
    /// Under ``SyncPolicy/interval(_:)``: a barrier timer is armed.
    private var timerArmed = false
    /// Under ``SyncPolicy/interval(_:)``: acknowledgements of committed changes, sent in the
    /// next turn of the owning queue.
    private var committed: [@Sendable () -> Void] = []
    /// A barrier is scheduled or in flight.
    private var barrierScheduled = false
    /// Changes committed since the last barrier started.
    private var dirty = false
    private var waiting: [@Sendable () -> Void] = []
    /// Runs after each barrier, before the acknowledgements (the scheduler delivers the new
    /// events from the log here).
    var afterBarrier: (() -> Void)?
    /// How the group commit's later turns on the owning queue get back to it; set by the
    /// owner before the first change.
    var reenter: Reenter?

    /// Switches the connection to `synchronous=NORMAL` for ordinary commits and opens the
    /// barrier's connection. Should either fail, every commit stays `FULL` or barriers run on
    /// the owning queue: slower, never less durable.
    init(database: Database, queue: DispatchQueue, policy: SyncPolicy = .always) {
        self.database = database
        self.queue = queue
        self.policy = policy
        if let connection = try? Database(path: database.path) {
            self.syncConnection = SyncConnection(connection)
        } else {
            self.syncConnection = nil
        }
        try? database.execute("PRAGMA synchronous = NORMAL")
    }

    /// Notes a committed change that must become durable soon.
    func changed() {
        dirty = true
        barrierNeeded()
    }

    /// Runs `work` once every change committed so far is durable: after the next barrier,
    /// or under ``SyncPolicy/interval(_:)`` in the next turn of the owning queue (the change
    /// is committed already; the timer's barrier makes it durable).
    func afterDurable(_ work: @escaping @Sendable () -> Void) {
        dirty = true
        guard case .interval = policy else {
            waiting.append(work)
            scheduleBarrier()
            return
        }
        committed.append(work)
        barrierNeeded()
        guard committed.count == 1 else { return }
        later { commit in
            let batch = commit.committed
            commit.committed.removeAll()
            commit.finish(batch)
        }
    }

    /// Starts a barrier soon: now, or under ``SyncPolicy/interval(_:)`` when the interval
    /// since the first change not yet covered has passed.
    private func barrierNeeded() {
        guard case .interval(let interval) = policy else { return scheduleBarrier() }
        guard !timerArmed else { return }
        timerArmed = true
        later(after: interval) { commit in
            commit.timerArmed = false
            if commit.dirty { commit.scheduleBarrier() }
        }
    }

    /// Makes every commit so far durable now (at shutdown), on the calling (owning) queue.
    func flush() {
        let batch = committed
        committed.removeAll()
        syncHere()
        finish(takeWaiting() + batch)
    }

    private func scheduleBarrier() {
        guard !barrierScheduled else { return }
        barrierScheduled = true
        later { $0.startBarrier() }
    }

    /// Runs `work` in a later turn of the owning queue (after `delay`), isolated to the owner.
    private func later(after delay: Duration? = nil, _ work: @escaping @Sendable (GroupCommit) -> Void) {
        guard let reenter else { preconditionFailure("GroupCommit used before its owner set reenter") }
        if let delay {
            queue.asyncAfter(deadline: .now() + delay.dispatchInterval) { reenter(work) }
        } else {
            queue.async { reenter(work) }
        }
    }

    private func takeWaiting() -> [@Sendable () -> Void] {
        defer { waiting.removeAll() }
        dirty = false
        return waiting
    }

    /// Starts a barrier covering every commit made so far.
    private func startBarrier() {
        let batch = takeWaiting()
        guard let syncConnection else {
            syncHere()
            barrierScheduled = false
            finish(batch)
            return
        }
        let path = database.path
        syncQueue.async { [reenter, queue] in
            do {
                try syncConnection.connection.withLock { db in
                    try db.write { db in try db.execute("UPDATE durability_barrier SET commits = commits + 1") }
                }
            } catch {
                // The changes are committed and survive a daemon crash; only the barrier's own
                // write failed (a full disk). Sync the WAL that holds them without writing.
                GroupCommit.syncWithoutWriting(path, after: error)
            }
            queue.async {
                reenter? { commit in
                    commit.barrierScheduled = false
                    commit.finish(batch)
                    if commit.dirty { commit.barrierNeeded() }
                }
            }
        }
    }

    /// A barrier through the main connection, on the owning queue.
    private func syncHere() {
        do {
            try database.execute("PRAGMA synchronous = FULL")
            try database.write { db in try db.execute("UPDATE durability_barrier SET commits = commits + 1") }
            try database.execute("PRAGMA synchronous = NORMAL")
        } catch {
            Self.syncWithoutWriting(database.path, after: error)
            try? database.execute("PRAGMA synchronous = NORMAL")
        }
    }

    /// When a barrier cannot write (the disk is full), fsync(2)s the WAL file, which holds
    /// every commit so far, so that what is acknowledged next is still durable.
    private static func syncWithoutWriting(_ path: String, after error: any Error) {
        let fd = open(path + "-wal", O_RDONLY | O_CLOEXEC)
        let synced = fd >= 0 && fsync(fd) == 0
        if fd >= 0 { close(fd) }
        if synced {
            DaemonLog.warning("the durability barrier cannot write (\(error)); synced \(path)-wal instead")
        } else {
            DaemonLog.error("cannot sync the job database to disk: \(error)")
        }
    }

    /// After a barrier: the events, then the acknowledgements it covered.
    private func finish(_ batch: [@Sendable () -> Void]) {
        afterBarrier?()
        for item in batch { item() }
    }

    /// The barrier's connection, reachable only under its lock, so the compiler checks it is
    /// never used by two queues at once (only `syncQueue` takes it; the lock is uncontended).
    private final class SyncConnection: Sendable {
        let connection: Mutex<Database>

        init(_ database: sending Database) {
            connection = Mutex(database)
        }
    }
}
