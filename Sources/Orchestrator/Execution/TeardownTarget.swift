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

    /// Sends `signal` to every member, each once: the process group, each process in the
    /// cgroup outside it (`SIGKILL` as `cgroup.kill`, which also catches forks in flight), and
    /// each process with the job's identity outside the groups signalled, with its own group.
    /// - Returns: the process groups signalled whole, and the processes signalled alone.
    @discardableResult
    func signal(_ signal: Int32) -> Signalled {
        // Each process gets the signal once: to many programs a second SIGTERM or SIGINT
        // means "quit now", skipping the cleanup the first one began. So the process group
        // goes first, then each member outside the groups already signalled.
        group.signal(signal)
        var signalled: Set<Int32> = [group.id]
        var processes: Set<Int32> = []
        if let cgroup, signal != SIGKILL || cgroup.kill() != 0 {
            for pid in cgroup.processes() where pid > 1 && !signalled.contains(getpgid(pid)) {
                kill(pid, signal)
                processes.insert(pid)
            }
        }
        if let identity {
            let ownGroup = getpgrp()
            for pid in ProcessIdentity.processes(of: identity) {
                let processGroup = getpgid(pid)
                if signalled.contains(processGroup) { continue }
                // A group of its own (setsid, setpgid) is signalled whole, the process with it;
                // never orchd's own group, of which only the process is.
                if processGroup > 1 && processGroup != ownGroup {
                    kill(-processGroup, signal)
                    signalled.insert(processGroup)
                } else {
                    kill(pid, signal)
                    processes.insert(pid)
                }
            }
        }
        return Signalled(groups: signalled, processes: processes)
    }

    /// What one ``signal(_:)`` reached.
    struct Signalled: Sendable {
        /// The process groups signalled whole.
        var groups: Set<Int32>
        /// The processes signalled alone, outside those groups.
        var processes: Set<Int32>

        /// Whether `pid` got the signal: it was signalled alone, or its group was (as the
        /// group is now: a process that moved into a signalled group since counts as
        /// signalled, one that left it with setsid(2) does not).
        func reached(_ pid: Int32) -> Bool {
            processes.contains(pid) || groups.contains(getpgid(pid))
        }
    }

    /// Whether nothing of the job runs any more: the cgroup is not populated, or (without one)
    /// the process group and every process with the job's identity are gone, by a look that
    /// was settled (``ProcessIdentity/look(for:)``: none of orchd's processes was being
    /// handed over or executing a new program, which could hide the job's), taken twice in a
    /// row as at a main process's exit (``JobOperation``): under load a chain of processes
    /// each starting the next in a new session slipped past a single settled look now and
    /// then, and ended its job with a link still running.
    var isGone: Bool {
        if let cgroup { return !cgroup.isPopulated }
        guard group.isGone else { return false }
        guard let identity else { return true }
        for _ in 0..<2 {
            let look = ProcessIdentity.look(for: identity)
            if !look.pids.isEmpty || look.unsettled { return false }
        }
        return true
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
