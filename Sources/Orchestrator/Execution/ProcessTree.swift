import CPosix
import Glibc

/// The daemon's processes as a tree, read from `/proc/PID/task/TID/children`
/// (proc_pid_task(5)): each thread's children, so a process's are all its threads' together.
enum ProcessTree {
    /// The children of `process` (`self`, or a pid): of every one of its threads.
    /// - Returns: their pids; none when the process is gone.
    static func children(of process: String) -> [Int32] {
        var pids: [Int32] = []
        for task in ProcStat.entryNames(of: "/proc/\(process)/task") {
            guard let bytes = ProcStat.readFile("/proc/\(process)/task/\(task)/children") else { continue }
            pids += bytes.split(separator: UInt8(ascii: " ")).compactMap { Int32(String(decoding: $0, as: UTF8.self)) }
        }
        return pids
    }

    /// Every live descendant of this daemon, when it is a child subreaper; `nil` when it is not.
    ///
    /// A subreaper's descendants stay its descendants: a process whose parent ends is given to
    /// the nearest subreaper among its ancestors (prctl(2), `PR_SET_CHILD_SUBREAPER`), never to
    /// a process outside the tree. So a job's processes, also those that left its process group
    /// or session, are among these, and looking at them alone is looking at every one.
    static func daemonDescendants() -> [Int32]? {
        guard cposix_is_child_subreaper() == 1 else { return nil }
        var found: [Int32] = []
        var seen: Set<Int32> = []
        var next = children(of: "self")
        while let pid = next.popLast() {
            // A pid read twice (one that ended and was reused meanwhile) is looked at once.
            guard seen.insert(pid).inserted else { continue }
            found.append(pid)
            next += children(of: String(pid))
        }
        return found
    }
}
