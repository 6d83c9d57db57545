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
            pids += Self.pids(in: bytes)
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
    /// - Parameter visit: called with each descendant as it is found, before its own
    ///   children are read (see ``descendants(of:procRoot:orphansArriveAt:visiting:)``).
    static func daemonDescendants(visiting visit: ((_ pid: Int32, _ handedOver: Bool) -> Void)? = nil) -> [Int32]? {
        guard cposix_is_child_subreaper() == 1 else { return nil }
        return descendants(of: "self", orphansArriveAt: getpid(), visiting: visit)
    }

    /// Every live descendant of `process` under `procRoot`, or `nil` when its own `children`
    /// files cannot be read.
    ///
    /// The files are read one after another, not at one instant. A process whose parent
    /// exits while they are read is handed over to the subreaper (`process`, when it is one)
    /// after the subreaper's list was read and before its parent's is: it is in neither. The
    /// kernel gives orphans to the subreaper's first live thread, its main thread, whose
    /// list is read again after the walk, and what arrived there walked too, until nothing
    /// new arrives (at most ``mostOrphanRereads`` times), so that a chain of processes each
    /// starting the next and exiting at once is not lost in its hand-overs.
    ///
    /// What is learnt of a process is best learnt in `visit`, before its children are read
    /// (``ProcessIdentity`` reads its environment there): a process found gone then has handed
    /// its children over already (the kernel does so before the parent becomes a zombie), so
    /// they are read where they arrived; one found alive is found, and what it starts after its
    /// list was read descends from a process found.
    /// - Parameters:
    ///   - process: `self` or a pid, under `procRoot`.
    ///   - orphansArriveAt: the thread whose children list receives `process`'s orphans
    ///     (its main thread's id, its pid), when it is a subreaper; `nil`: not read again.
    ///   - visit: called with each descendant as it is found, before its children are read,
    ///     and whether it was handed over to `process` while the walk ran: a process whose
    ///     parent exited meanwhile, or a child of one of `process`'s threads that ended.
    static func descendants(
        of process: String, procRoot: String = "/proc", orphansArriveAt mainThread: Int32? = nil,
        visiting visit: ((_ pid: Int32, _ handedOver: Bool) -> Void)? = nil
    ) -> [Int32]? {
        guard let top = readChildren(of: process, procRoot: procRoot) else { return nil }
        var found: [Int32] = []
        var seen: Set<Int32> = []
        func walk(from start: [Int32], handedOver: Bool) {
            var next = start
            let arrived = handedOver ? Set(start) : []
            while let pid = next.popLast() {
                // A pid read twice (one that ended and was reused meanwhile) is looked at once.
                guard seen.insert(pid).inserted else { continue }
                found.append(pid)
                visit?(pid, arrived.contains(pid))
                next += readChildren(of: String(pid), procRoot: procRoot) ?? []
            }
        }
        walk(from: top, handedOver: false)
        guard let mainThread else { return found }
        for _ in 0..<mostOrphanRereads {
            guard let bytes = ProcStat.readFile("\(procRoot)/\(process)/task/\(mainThread)/children") else { break }
            let arrived = pids(in: bytes).filter { !seen.contains($0) }
            if arrived.isEmpty { break }
            walk(from: arrived, handedOver: true)
        }
        return found
    }

    /// How many times one walk reads the subreaper's list again for orphans that arrived
    /// during it: a bound for processes that exit faster than they can be walked.
    static let mostOrphanRereads = 32

    /// The pids in a `children` file: decimal numbers separated by spaces.
    private static func pids(in bytes: [UInt8]) -> [Int32] {
        bytes.split(separator: UInt8(ascii: " ")).compactMap { Int32(String(decoding: $0, as: UTF8.self)) }
    }
}
