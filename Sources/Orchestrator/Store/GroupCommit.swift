import Dispatch
import Glibc
import Foundation
import Synchronization

/// Group commit: many state changes, one `fsync`.
///
/// The connection commits each transaction with `synchronous=NORMAL`: in WAL mode such a
/// commit is atomic and survives a crash of the daemon, but not yet a power loss
/// (<https://www.sqlite.org/pragma.html#pragma_synchronous>): SQLite writes its frames to the
/// WAL file without syncing it. Durability comes from a barrier, an `fdatasync(2)` of the WAL
/// file, which puts every frame written before it on disk, so every commit made before the
/// barrier started (<https://www.sqlite.org/wal.html>: a transaction is its frames in the WAL,
/// up to its commit frame). SQLite itself syncs the WAL before each checkpoint copies it into
/// the database, and the database after, so frames a checkpoint reuses are already durable.
///
/// The barrier runs on its own queue, so the owning queue (the scheduler's control queue)
/// goes on working during the `fsync`; changes made meanwhile share the next barrier. A
/// barrier starts after the burst of work already waiting on the owning queue, and at most one
/// is in flight. Acknowledgements that promise durability (a submit's reply) run once a
/// barrier that started after them has finished; a change no acknowledgement waits for waits
/// at most ``unacknowledgedChangeDelay`` for its barrier.
///
/// The barrier writes nothing to the database: a write from another connection would make the
/// main connection drop its page cache at its next transaction and read every page again.
///
/// Under ``SyncPolicy/interval(_:)`` they run once committed, in the next turn of the owning
/// queue (events first, as after a barrier), and a timer starts a barrier at most the
/// interval after the first change it covers.
///
/// A barrier whose `fdatasync` fails ends the daemon (``syncFailed``): Linux may report a
/// writeback error once and then count the pages as written, so no later barrier could tell
/// whether the commits it covered are on disk, and their acknowledgements are never sent. So
/// does an fsync of SQLite's own checkpoint that failed (``Database/checkpointSyncFailure``),
/// or a WAL file gone or refused. One that cannot be opened for want of descriptors
/// (`EMFILE`) is no such failure: no sync was tried, and the barrier is tried again every
/// ``reopenDelay``, its acknowledgements and any that come meanwhile waiting, and
/// ``descriptorRelief`` is asked for descriptors each time.
///
/// Not `Sendable`: owned by an actor on the owning queue (the ``Scheduler``), which calls it
/// there; its own later turns re-enter it through ``reenter``, i.e. through that actor.
final class GroupCommit {
    /// Runs `work` with this group commit, isolated to its owner; called on the owning queue.
    typealias Reenter = @Sendable (_ work: @escaping @Sendable (GroupCommit) -> Void) -> Void

    private let database: Database
    private let queue: DispatchQueue
    private let syncQueue: DispatchQueue
    /// When acknowledgements may go out: after a barrier, or once committed.
    let policy: SyncPolicy
    /// Under ``SyncPolicy/interval(_:)``: a barrier timer is armed.
    private var timerArmed = false
    /// Under ``SyncPolicy/interval(_:)``: acknowledgements of committed changes, sent in the
    /// next turn of the owning queue.
    private var committed: [@Sendable () -> Void] = []
    /// A barrier is scheduled or in flight.
    private var barrierScheduled = false
    /// Changes committed since the last barrier started. Set at first: the WAL may hold
    /// commits of an orchd that was killed before their barrier, which survive a crash of
    /// the process but not a power loss, until a barrier of this one syncs them.
    private var dirty = true
    private var waiting: [@Sendable () -> Void] = []
    /// The acknowledgements of the barrier in flight, run when it finishes, or by ``flush()``
    /// if that comes first (at shutdown: the connections close right after it).
    private var inFlight: [@Sendable () -> Void] = []
    /// The state directory was synced once, so the WAL file's own name is durable.
    private var directorySynced = false
    /// Barriers finished so far (the tests watch it).
    private(set) var barriersFinished = 0
    /// Runs after each barrier, before its acknowledgements (the scheduler delivers the new
    /// events from the log here), with what ``barrierStarting`` returned as the barrier
    /// started: what it made durable. `nil`: everything committed so far (under
    /// ``SyncPolicy/interval(_:)``, whose events go out once committed, and after a flush).
    var afterBarrier: ((_ durableThrough: Int64?) -> Void)?
    /// Runs on the owning queue as a barrier starts (the scheduler returns the last event's
    /// sequence number). A change committed while the `fdatasync` runs may not be on disk when
    /// it returns, so its events wait for the next barrier.
    var barrierStarting: (() -> Int64?)?
    /// How the group commit's later turns on the owning queue get back to it; set by the
    /// owner before the first change.
    var reenter: Reenter?

    /// Runs on the owning queue when a barrier's `fdatasync` failed, with the error's text:
    /// the acknowledgements it held are dropped and no barrier starts again, so nothing more
    /// is promised durable. The scheduler ends the daemon here (a restart recovers what is on
    /// disk, as after a crash).
    var syncFailed: ((_ message: String) -> Void)?
    /// A barrier's `fdatasync` failed: nothing is acknowledged any more.
    private(set) var durabilityLost = false
    /// What the barrier in flight's sync returned, once it has (a flush waits for it).
    private var inFlightOutcome: LockedBox<SyncOutcome?>?
    /// Barriers in a row whose WAL file could not be opened (the first of every
    /// ``reopenFailuresLogged`` is logged).
    private var reopenFailures = 0
    /// How a barrier syncs: ``SyncedFiles/sync(withDirectory:)``; tests pass one that fails.
    private let sync: @Sendable (_ withDirectory: Bool) -> SyncOutcome

    /// How one barrier's sync went.
    enum SyncOutcome: Equatable, Sendable {
        /// The WAL (and, when asked, the directory) is on disk.
        case durable
        /// The WAL file, or the directory, could not be opened for want of descriptors or
        /// memory (that sync was not tried); worth trying again.
        case notOpened(String)
        /// `fdatasync` failed, or the file is gone or refused: what it covered may never
        /// reach the disk.
        case failed(String)
    }

    /// Asked for descriptors each time the WAL file could not be opened (tests set their own).
    var descriptorRelief = DescriptorRelief.process

    /// How long a barrier whose WAL file could not be opened waits before it is tried again.
    static let reopenDelay: Duration = .milliseconds(100)
    /// One of this many failed opens in a row is logged (once every 10 s).
    static let reopenFailuresLogged = 100

    /// Switches the connection to `synchronous=NORMAL` for ordinary commits. Should that
    /// fail, every commit stays `FULL`: slower, never less durable.
    /// - Parameters:
    ///   - syncQueue: where barriers run (tests pass one they can hold up).
    ///   - sync: how a barrier syncs (tests pass one that fails); `nil`:
    ///     ``SyncedFiles/sync(withDirectory:)`` of the database's files.
    init(
        database: Database, queue: DispatchQueue, policy: SyncPolicy = .always,
        syncQueue: DispatchQueue = DispatchQueue(label: "orchd.group-commit"),
        sync: (@Sendable (_ withDirectory: Bool) -> SyncOutcome)? = nil
    ) {
        self.database = database
        self.queue = queue
        self.policy = policy
        self.syncQueue = syncQueue
        self.sync = sync ?? SyncedFiles(databasePath: database.path).sync(withDirectory:)
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
            commit.finish(batch, durableThrough: nil)
        }
    }

    /// Runs `work` once every change committed so far is durable, for an answer that reports
    /// earlier changes and makes none of its own (a wait for jobs that have ended): at once when
    /// none is waiting for a barrier, with the barrier in flight when that one covers them all,
    /// else after the next barrier, as ``afterDurable(_:)``. Under ``SyncPolicy/interval(_:)``
    /// at once, unless acknowledgements of committed changes wait for their turn (it runs with
    /// them, after their events).
    ///
    /// A wait for a job that ended long ago used to start a barrier of its own: an `fdatasync`
    /// and two turns of the owning queue before an answer that nothing had to wait for.
    func whenDurable(_ work: @escaping @Sendable () -> Void) {
        guard !durabilityLost else { return }
        switch policy {
        case .interval:
            if committed.isEmpty { return work() }
            committed.append(work)
        case .always:
            if dirty {
                afterDurable(work)
            } else if inFlightOutcome != nil {
                // Not dirty, a barrier started (taking the changes with it): it covers every
                // commit so far. One merely scheduled, not started, after a flush made every
                // commit durable, covers nothing this answer waits for: it would replace
                // `inFlight` as it starts.
                inFlight.append(work)
            } else {
                work()
            }
        }
    }

    /// Under ``SyncPolicy/always``: how long changes no acknowledgement waits for may wait for
    /// a barrier (their events go out after it), so that the changes of a burst share one
    /// `fsync` instead of starting one each.
    static let unacknowledgedChangeDelay: Duration = .milliseconds(10)

    /// Starts a barrier soon: now when an acknowledgement waits for it; otherwise when
    /// ``unacknowledgedChangeDelay``, or under ``SyncPolicy/interval(_:)`` the interval, has
    /// passed since the first change not yet covered.
    private func barrierNeeded() {
        let delay: Duration
        switch policy {
        case .always:
            guard waiting.isEmpty else { return scheduleBarrier() }
            delay = Self.unacknowledgedChangeDelay
        case .interval(let interval):
            delay = interval
        }
        guard !timerArmed else { return }
        timerArmed = true
        later(after: delay) { commit in
            commit.timerArmed = false
            if commit.dirty { commit.scheduleBarrier() }
        }
    }

    /// Makes every commit so far durable now (at shutdown), on the calling (owning) queue,
    /// and runs every acknowledgement waiting for it, those of a barrier still in flight too:
    /// this sync covers their commits as well, and once it returns the connections close, so
    /// an acknowledgement left to that barrier could be a stored job whose reply is lost.
    /// A barrier in flight is waited for first: when its `fdatasync` failed, this one's could
    /// succeed without the lost writes, so its failure decides. A sync that fails here, or a
    /// WAL file that cannot be opened at this last chance, acknowledges nothing.
    func flush() {
        if barrierScheduled, let inFlightOutcome {
            syncQueue.sync {}
            if case .failed(let message)? = inFlightOutcome.value { return lose(message) }
        }
        let batch = inFlight + committed
        inFlight.removeAll()
        committed.removeAll()
        guard !durabilityLost, syncHere() else { return }
        finish(batch + takeWaiting(), durableThrough: nil)
    }

    private func scheduleBarrier() {
        guard !barrierScheduled, !durabilityLost else { return }
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
        // A retry scheduled before a flush lost durability: nothing is left to acknowledge.
        guard !durabilityLost else { return }
        inFlight = takeWaiting()
        let mark = barrierStarting?()
        let withDirectory = !directorySynced
        let outcomeBox = LockedBox<SyncOutcome?>(nil)
        inFlightOutcome = outcomeBox
        syncQueue.async { [reenter, queue, sync] in
            let outcome = sync(withDirectory)
            outcomeBox.value = outcome
            queue.async {
                reenter? { commit in
                    commit.inFlightOutcome = nil
                    // Empty when a flush ran them first.
                    let batch = commit.inFlight
                    commit.inFlight.removeAll()
                    commit.barrierFinished(outcome, batch: batch, withDirectory: withDirectory, mark: mark)
                }
            }
        }
    }

    /// Back on the owning queue after a barrier's sync: acknowledges what it covered, tries a
    /// WAL file that could not be opened again, or gives up on durability.
    private func barrierFinished(_ outcome: SyncOutcome, batch: [@Sendable () -> Void], withDirectory: Bool, mark: Int64?) {
        switch checked(outcome) {
        case .durable:
            barrierScheduled = false
            if withDirectory { directorySynced = true }
            barriersFinished += 1
            if reopenFailures > 0 {
                DaemonLog.info("the job database can be synced again; acknowledgements go out")
                reopenFailures = 0
            }
            finish(batch, durableThrough: mark)
            if dirty { barrierNeeded() }
        case .notOpened(let message):
            // One retry at a time: changes meanwhile wait with these (barrierScheduled stays).
            if reopenFailures % Self.reopenFailuresLogged == 0 {
                DaemonLog.error("\(message); acknowledgements wait, trying again every \(Self.reopenDelay)")
            }
            reopenFailures += 1
            descriptorRelief.ask()
            waiting = batch + waiting
            dirty = true
            later(after: Self.reopenDelay) { $0.startBarrier() }
        case .failed(let message):
            barrierScheduled = false
            lose(message)
        }
    }

    /// `outcome`, unless SQLite's own checkpoint failed to sync meanwhile: then the sync that
    /// succeeded proves nothing (``Database/checkpointSyncFailure``).
    private func checked(_ outcome: SyncOutcome) -> SyncOutcome {
        guard case .durable = outcome, let failure = database.checkpointSyncFailure else { return outcome }
        return .failed("cannot sync the job database to disk: \(failure.message)")
    }

    /// A barrier on the owning queue; `false` when it failed (``lose(_:)`` has run).
    private func syncHere() -> Bool {
        switch checked(sync(!directorySynced)) {
        case .durable:
            directorySynced = true
            barriersFinished += 1
            return true
        case .notOpened(let message), .failed(let message):
            // The last chance (a stop): nothing can be retried.
            lose(message)
            return false
        }
    }

    /// A sync failed: drops every acknowledgement waiting, starts no barrier again, and tells
    /// the owner.
    private func lose(_ message: String) {
        // Once: a flush that found the barrier in flight failed has lost it already when that
        // barrier's own result comes back.
        guard !durabilityLost else { return }
        durabilityLost = true
        waiting.removeAll()
        inFlight.removeAll()
        committed.removeAll()
        DaemonLog.error(message)
        syncFailed?(message)
    }

    /// The database and WAL files a barrier syncs, as they were when first seen: SQLite keeps
    /// both open, so a name that is gone or names another file means the frames SQLite writes
    /// are in a file no barrier reaches (someone removed or replaced it), and nothing can be
    /// promised durable.
    final class SyncedFiles: Sendable {
        /// A file's device and inode.
        struct Identity: Equatable, Sendable {
            var device: UInt64
            var inode: UInt64

            init(_ info: stat) {
                device = UInt64(info.st_dev)
                inode = UInt64(info.st_ino)
            }
        }

        /// The database file's path.
        let databasePath: String
        private let identities = Mutex<(database: Identity?, wal: Identity?)>((nil, nil))

        /// Records the database file as it is now (it is open).
        init(databasePath: String) {
            self.databasePath = databasePath
            var info = stat()
            if stat(databasePath, &info) == 0 {
                identities.withLock { $0.database = Identity(info) }
            }
        }

        /// Whether an `open(2)` that failed with `code` (an errno) may succeed when tried again:
        /// orchd was out of descriptors or memory, or was interrupted.
        static func isShortage(_ code: Int32) -> Bool {
            [EMFILE, ENFILE, ENOMEM, EINTR, EAGAIN].contains(code)
        }

        /// `fdatasync(2)`s the WAL file, which holds every commit not yet checkpointed; when
        /// `withDirectory`, also the directory, which holds the WAL file's name. A WAL or
        /// database file that is gone or was replaced fails, as does the sync; a WAL file or
        /// directory that cannot be opened for want of descriptors or memory is `notOpened`.
        func sync(withDirectory: Bool) -> SyncOutcome {
            let walPath = databasePath + "-wal"
            let fd = open(walPath, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                let message = "cannot sync the job database to disk: cannot open \(walPath): \(String(cString: strerror(code)))"
                // Out of descriptors or memory passes; a file gone or refused does not.
                return Self.isShortage(code) ? .notOpened(message) : .failed(message)
            }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                return .failed("cannot sync the job database to disk: cannot stat \(walPath): \(String(cString: strerror(errno)))")
            }
            let wal = Identity(info)
            let expected = identities.withLock { identities in
                if identities.wal == nil { identities.wal = wal }
                return identities
            }
            guard expected.wal == wal else {
                return .failed("cannot sync the job database to disk: \(walPath) was replaced by another file")
            }
            guard stat(databasePath, &info) == 0 else {
                return .failed("cannot sync the job database to disk: \(databasePath): \(String(cString: strerror(errno)))")
            }
            guard expected.database == nil || expected.database == Identity(info) else {
                return .failed("cannot sync the job database to disk: \(databasePath) was replaced by another file")
            }
            guard fdatasync(fd) == 0 else {
                return .failed("cannot sync the job database to disk: \(String(cString: strerror(errno)))")
            }
            guard withDirectory else { return .durable }
            let directory = (databasePath as NSString).deletingLastPathComponent
            let directoryFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            // A directory that cannot be read (mode 0300) cannot be synced at all: the WAL's
            // own sync stands; waiting would hold every acknowledgement for ever. One not
            // opened for want of descriptors or memory is tried again, as the WAL file is.
            guard directoryFD >= 0 else {
                let code = errno
                guard Self.isShortage(code) else { return .durable }
                return .notOpened("cannot sync the state directory \(directory) to disk: \(String(cString: strerror(code)))")
            }
            defer { close(directoryFD) }
            guard fsync(directoryFD) == 0 else {
                return .failed("cannot sync the state directory \(directory) to disk: \(String(cString: strerror(errno)))")
            }
            return .durable
        }
    }

    /// After a barrier: the events, then the acknowledgements it covered. Acknowledgements
    /// first was measured too: a reply then reaches its client while this queue still
    /// delivers the events, and a client that pipelines single submits got 28% fewer through
    /// (its next call and the event delivery took turns on two CPUs); batches gained
    /// nothing beyond the noise.
    private func finish(_ batch: [@Sendable () -> Void], durableThrough mark: Int64?) {
        afterBarrier?(mark)
        for item in batch { item() }
    }
}
