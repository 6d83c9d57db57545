import OrchestratorAPI

/// Who makes a request, and what they may do: the one rule of job ownership.
///
/// A caller manages a job when they own it (submitted it) or are an admin: root, the
/// daemon's own user, or a member of the admin group (``AccessPolicy``). Every request about
/// one job goes through ``Scheduler/authorize(_:toManage:)``, which applies
/// ``mayManage(owner:)``.
public struct Caller: Hashable, Sendable {
    /// The caller's uid (`SO_PEERCRED`).
    public var uid: UInt32
    /// Whether the caller manages every job and the queues.
    public var isAdmin: Bool

    /// Creates a value with every field given.
    public init(uid: UInt32, isAdmin: Bool) {
        self.uid = uid
        self.isAdmin = isAdmin
    }

    /// The daemon itself, and root: manages everything.
    public static let root = Caller(uid: 0, isAdmin: true)

    /// A caller no one has vouched for: may manage no one's job (uid −1 is no user's).
    public static let nobody = Caller(uid: UInt32.max, isAdmin: false)

    /// Whether this caller may see the details and logs of, wait for, and change a job of
    /// `owner`.
    public func mayManage(owner: UInt32) -> Bool {
        isAdmin || uid == owner
    }
}

extension Scheduler {
    /// Checks that `caller` may see, wait for or change `job`: the one place ownership is
    /// decided, for single-job and bulk requests alike.
    /// - Throws: ``SchedulerError/permissionDenied(_:)`` when the job is another user's and
    ///   the caller is no admin.
    public nonisolated func authorize(_ caller: Caller, toManage job: Job) throws(SchedulerError) {
        guard caller.mayManage(owner: job.submitterUid) else { throw .permissionDenied(job.id) }
    }
}

extension Job {
    /// The job as someone who does not manage it sees it in an every-user listing
    /// (`status --all-users`), as ps(1) shows other users' processes: its ID, owner, state,
    /// queue, times and command; no working directory, name, labels, unique key or pid (the
    /// environment is never sent), nor why it could not start (that names its paths).
    public var redactedForOthers: Job {
        var job = self
        if case .finished(.spawnFailed) = job.state { job.state = .finished(.spawnFailed(reason: "")) }
        job.spec.cwd = ""
        job.spec.environment = [:]
        job.spec.name = nil
        job.spec.labels = [:]
        job.spec.uniqueKey = nil
        job.pid = nil
        return job
    }
}
