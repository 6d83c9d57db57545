import CPosix
import Foundation

/// A process group, addressed by its ID (the pid of the job's main process, which leads it).
///
/// Signals go to every member at once (`kill(-pgid, sig)`, kill(2)), so a job's background
/// children are stopped with it.
public struct ProcessGroup: Hashable, Sendable {
    /// The process group ID.
    public var id: Int32

    /// Names a process group.
    /// - Parameter id: the process group ID; must be greater than 1.
    public init(id: Int32) {
        precondition(id > 1, "process group \(id) would signal more than one group")
        self.id = id
    }

    /// Sends `signal` to every process in the group (kill(2) with `-id`).
    /// - Parameter signal: the signal number, or 0 to only check for existence.
    /// - Returns: `0` when sent, else the `errno` value (`ESRCH`: no such group; `EPERM`:
    ///   a member belongs to another user).
    @discardableResult
    public func signal(_ signal: Int32) -> Int32 {
        kill(-id, signal) == 0 ? 0 : errno
    }

    /// Whether the group has no live process left.
    ///
    /// True when kill(2) says the group does not exist (`ESRCH`), and also when every member
    /// left is a zombie: a zombie stays in its group until its parent reaps it, and an
    /// orphan's parent may be an init that reaps only every few seconds. A zombie runs
    /// nothing and can take no signal, so for a teardown the group is gone. Membership comes
    /// from field 5 (`pgrp`) and field 3 (`state`) of `/proc/PID/stat`, proc_pid_stat(5).
    /// A scan that cannot be made (orchd out of descriptors) counts as members left: taking
    /// it for none would end a teardown without a signal.
    public var isGone: Bool {
        if kill(-id, 0) != 0 && errno == ESRCH { return true }
        return scanMembers()?.isEmpty ?? false
    }

    /// The pids of the group's members that are not zombies, from a scan of `/proc`; none
    /// found when the scan cannot be made.
    public func liveMembers() -> [Int32] {
        scanMembers() ?? []
    }

    /// The live members, or `nil` when `/proc` cannot be read for want of descriptors or
    /// memory (``ProcStat/isResourceShortage(_:)``).
    private func scanMembers() -> [Int32]? {
        guard let names = ProcStat.listedEntryNames(of: "/proc") else { return nil }
        var members: [Int32] = []
        for name in names {
            guard let pid = Int32(name) else { continue }
            guard let fields = ProcStat.fields(pid: pid) else {
                if ProcStat.isResourceShortage(errno) { return nil }
                continue  // gone meanwhile
            }
            guard fields.count > 2, Int32(fields[2]) == id else { continue }
            if fields[0] != "Z" && fields[0] != "X" { members.append(pid) }
        }
        return members
    }

    /// Blocks until every live member has exited, waiting on their pidfds with poll(2).
    ///
    /// For start-up recovery only, before the daemon serves anyone: signal delivery is
    /// asynchronous, and a job must be down before it is recorded as ended.
    /// - Parameter timeout: the longest wait; members still alive then are left.
    /// - Returns: whether the group is gone.
    @discardableResult
    public func waitUntilGone(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isGone {
            guard ContinuousClock.now < deadline else { return false }
            // The members listed gone, new ones may have joined: look again. Members that
            // cannot be listed or watched now (out of descriptors): look again shortly.
            let members = liveMembers()
            if members.isEmpty || !ProcessExitWait.untilExited(members, deadline: deadline) { _ = poll(nil, 0, 10) }
        }
        return true
    }
}
