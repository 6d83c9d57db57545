import Foundation
import Glibc

/// What a ``TeardownRun`` signals and waits for: the job's process group, plus its cgroup
/// (cgroup containment) or the processes carrying its identity (process-group containment, at
/// cancel, timeout and stop), so that processes that left the group with setsid(2) are torn
/// down too.
struct TeardownTarget: Sendable {
    /// The process group the job's main process leads.
    let group: ProcessGroup
    /// The attempt's cgroup, when it runs in one.
    let cgroup: Cgroup?
    /// The job identity to scan `/proc/PID/environ` for (process-group containment).
    let identity: ProcessIdentity.Job?

    /// Sends `signal` to every member: each process in the cgroup (`SIGKILL` as
    /// `cgroup.kill`, which also catches forks in flight), the process group, and each process
    /// with the job's identity together with its process group.
    func signal(_ signal: Int32) {
        if let cgroup {
            if signal != SIGKILL || cgroup.kill() != 0 { cgroup.signal(signal) }
        }
        group.signal(signal)
        if let identity {
            let ownGroup = getpgrp()
            for pid in ProcessIdentity.processes(of: identity) {
                kill(pid, signal)
                let processGroup = getpgid(pid)
                if processGroup > 1 && processGroup != ownGroup && processGroup != group.id { kill(-processGroup, signal) }
            }
        }
    }

    /// Whether nothing of the job runs any more: the cgroup is not populated, or (without one)
    /// the process group and every process with the job's identity are gone, by a look that
    /// was settled (``ProcessIdentity/look(for:)``: none of orchd's processes was being
    /// handed over or executing a new program, which could hide the job's).
    var isGone: Bool {
        if let cgroup { return !cgroup.isPopulated }
        guard group.isGone else { return false }
        guard let identity else { return true }
        let look = ProcessIdentity.look(for: identity)
        return look.pids.isEmpty && !look.unsettled
    }

    /// The live members to watch by pidfd, without a cgroup (whose emptiness is watched by
    /// ``CgroupWatcher`` instead): all of them, and those found by identity outside the
    /// process group (processes that left it with setsid(2)).
    func liveMembers() -> (all: [Int32], outsideGroup: Set<Int32>) {
        let members = group.liveMembers()
        guard let identity else { return (members, []) }
        let outside = Set(ProcessIdentity.processes(of: identity)).subtracting(members)
        return (members + outside, outside)
    }
}
