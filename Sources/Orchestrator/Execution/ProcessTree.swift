import CPosix
import Glibc

/// The daemon's processes as a tree, read from `/proc/PID/task/TID/children`
/// (proc_pid_task(5)): each thread's children, so a process's are all its threads' together.
enum ProcessTree {
    /// The children of `process` (`self`, or a pid): of every one of its threads.
    /// - Returns: their pids; none when the process is gone.
    static func children(of process: String) -> [Int32] {
        readChildren(of: process) ?? []
    }

    /// The children of `process` under `procRoot`, or `nil` when no thread's `children` file
    /// could be read: the process is gone, or the kernel has no such files
    /// (`CONFIG_PROC_CHILDREN` is off), so its children cannot be known this way.
    static func readChildren(of process: String, procRoot: String = "/proc") -> [Int32]? {
        var pids: [Int32] = []
        var readAny = false
        for task in ProcStat.entryNames(of: "\(procRoot)/\(process)/task") {
            guard let bytes = ProcStat.readFile("\(procRoot)/\(process)/task/\(task)/children") else { continue }
            readAny = true
            pids += bytes.split(separator: UInt8(ascii: " ")).compactMap { Int32(String(decoding: $0, as: UTF8.self)) }
        }
        return readAny ? pids : nil
    }

    /// Every live descendant of this daemon, when it is a child subreaper; `nil` when it is not.
    ///
    /// A subreaper's descendants stay its descendants: a process whose parent ends is given to
    /// the nearest subreaper among its ancestors (prctl(2), `PR_SET_CHILD_SUBREAPER`). So a
    /// job's processes, also those that left its process group or session, are among these.
    /// Only within orchd's PID namespace: one that root moves into another (setns(2)) goes to
    /// that namespace's init when orphaned, and escapes, as one that clears its environment
    /// escapes any scan (README, "Containment").
    /// Also `nil` when the daemon's own `children` files cannot be read (a kernel without
    /// `CONFIG_PROC_CHILDREN`): an empty tree there would hide every escaped process.
    static func daemonDescendants() -> [Int32]? {
        guard cposix_is_child_subreaper() == 1 else { return nil }
        return descendants(of: "self")
    }

    /// Every live descendant of `process` under `procRoot`, or `nil` when its own `children`
    /// files cannot be read.
    static func descendants(of process: String, procRoot: String = "/proc") -> [Int32]? {
        guard var next = readChildren(of: process, procRoot: procRoot) else { return nil }
        var found: [Int32] = []
        var seen: Set<Int32> = []
        while let pid = next.popLast() {
            // A pid read twice (one that ended and was reused meanwhile) is looked at once.
            guard seen.insert(pid).inserted else { continue }
            found.append(pid)
            next += readChildren(of: String(pid), procRoot: procRoot) ?? []
        }
        return found
    }
}
