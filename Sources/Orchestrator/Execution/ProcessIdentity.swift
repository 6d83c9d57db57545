import CPosix
import Foundation
import Glibc

/// How a job's or a hook's processes carry its identity: environment variables by which the
/// process-group fallback of containment finds processes that left their process group, and by
/// which recovery finds the processes of a job whose pid was never recorded (the daemon died
/// between spawning it and committing the pid) and the hooks a previous daemon left running.
///
/// A job's processes carry `ORCHD_JOB_ID` and `ORCHD_STATE_DIR`. A hook's carry
/// `ORCHD_HOOK_ID` and `ORCHD_STATE_DIR`, and also the `ORCHD_JOB_ID` of the job whose event
/// fired it; a process with `ORCHD_HOOK_ID` is therefore never counted as the job's own, so a
/// job's teardown does not kill the hooks its events started (and a hook outlives nothing:
/// it has its own teardown).
enum ProcessIdentity {
    /// `ORCHD_JOB_ID`: the job's ID; jobs may use it too.
    static let jobVariable = "ORCHD_JOB_ID"
    /// `ORCHD_HOOK_ID`: the hook run's number, unique within one daemon's run.
    static let hookVariable = "ORCHD_HOOK_ID"
    /// `ORCHD_STATE_DIR`: the daemon's state directory, so two daemons' job 7 are told apart.
    static let stateDirectoryVariable = "ORCHD_STATE_DIR"

    /// One job, or one hook run, of one daemon, as its processes' environments name it.
    struct Job: Hashable, Sendable {
        /// The job's ID, or the hook run's number when ``isHook``.
        var id: Int64
        /// The daemon's state directory.
        var stateDirectory: String
        /// Whether this names a hook run (`ORCHD_HOOK_ID`) rather than a job.
        var isHook = false
    }

    /// A state directory as a process's environment may name it: by the name the daemon
    /// gives it, or by another name of the same directory (its device and inode, stat(2)).
    struct DirectoryIdentity {
        private let name: [UInt8]
        private let device: dev_t?
        private let inode: ino_t

        /// - Parameter path: the directory's resolved name.
        init(path: String) {
            name = Array(path.utf8)
            var info = stat()
            let found = stat(path, &info) == 0
            device = found ? info.st_dev : nil
            inode = found ? info.st_ino : 0
        }

        /// Whether `other`, an absolute path, names this directory.
        func isNamed(by other: ArraySlice<UInt8>) -> Bool {
            if other.elementsEqual(name) { return true }
            guard let device, other.first == UInt8(ascii: "/") else { return false }
            var info = stat()
            // A name in someone's environment must not mount anything.
            let found = (Array(other) + [0]).withUnsafeBufferPointer { path in
                path.withMemoryRebound(to: CChar.self) { cposix_stat_no_automount($0.baseAddress!, &info) == 0 }
            }
            return found && info.st_mode & S_IFMT == S_IFDIR && info.st_dev == device && info.st_ino == inode
        }
    }

    /// The process groups holding a process that a previous incarnation of this daemon left
    /// (recovery: in one look at every process): of a job recorded running, of any hook run,
    /// and of any other of its jobs but those in `spared`. A job of this state directory that
    /// is not recorded running has no process by rights (its database was lost or replaced
    /// after a crash), except in Slurm: a process with `SLURM_JOB_ID` (Slurm gives it to every
    /// process of its jobs, and orchd's batch script keeps it) is left to Slurm unless its job
    /// is recorded running here. Hook processes count as hooks, not as the job whose event
    /// fired them.
    /// - Parameters:
    ///   - running: the jobs recorded running on this machine.
    ///   - spared: the jobs whose attempts run in Slurm, followed again, not killed.
    ///   - stateDirectory: the daemon's state directory.
    /// - Returns: the process group IDs, each once.
    static func processGroups(ofJobs running: Set<Int64>, sparing spared: Set<Int64>, orHooksOf stateDirectory: String) -> [Int32] {
        let jobPrefix = Array("\(jobVariable)=".utf8)
        let hookPrefix = Array("\(hookVariable)=".utf8)
        let slurmPrefix = Array("\(SlurmBatchScript.jobIDVariable)=".utf8)
        let directoryPrefix = Array("\(stateDirectoryVariable)=".utf8)
        let directory = DirectoryIdentity(path: stateDirectory)
        return groups(of: scan(everyProcess) { entries in
            let isHook = entries.contains(where: { $0.starts(with: hookPrefix) })
            let jobEntry = entries.first(where: { $0.starts(with: jobPrefix) })
            // Read only for a process that carries a job's or a hook's identity: the directory
            // may be named another way (a bind mount, an older orchd's spelling), so a name
            // that differs is compared by what it names.
            guard isHook || jobEntry != nil,
                entries.contains(where: { $0.starts(with: directoryPrefix) && directory.isNamed(by: $0.dropFirst(directoryPrefix.count)) })
            else { return false }
            if isHook { return true }
            guard let entry = jobEntry, let id = Int64(String(decoding: entry.dropFirst(jobPrefix.count), as: UTF8.self))
            else { return false }
            if running.contains(id) { return true }
            return !spared.contains(id) && !entries.contains(where: { $0.starts(with: slurmPrefix) })
        })
    }

    /// Whether `pid`'s environment names a state directory other than `stateDirectory` (by
    /// name and by device and inode): the process is a job of another daemon. `false` when it
    /// names none or cannot be read.
    static func namesAnotherStateDirectory(_ pid: Int32, than stateDirectory: String) -> Bool {
        guard case .environment(let environ) = read(pid) else { return false }
        let directoryPrefix = Array("\(stateDirectoryVariable)=".utf8)
        guard let entry = environ.split(separator: 0).first(where: { $0.starts(with: directoryPrefix) }) else { return false }
        return !DirectoryIdentity(path: stateDirectory).isNamed(by: entry.dropFirst(directoryPrefix.count))
    }

    /// The live processes whose environment names this job (or hook run) of this daemon,
    /// looked for among the daemon's descendants when it is a child subreaper (where every
    /// process of its jobs stays; ``ProcessTree/daemonDescendants()``), else among every
    /// process. Zombies have no readable environment and are left out.
    /// - Parameter job: the job or hook run, and daemon.
    /// - Returns: their pids.
    static func processes(of job: Job) -> [Int32] {
        look(for: job).pids
    }

    /// The live processes of `job`, as ``processes(of:)`` finds them, and whether the look was
    /// unsettled: processes were handed over to orchd while it walked its descendants (so
    /// something in its tree was exiting and leaving children), or one was executing a new
    /// program and could not be read. A look that finds nothing but was unsettled proves
    /// little (a chain of processes each starting the next and exiting is forever being
    /// handed over or executing); a second one, a moment later, settles it.
    static func look(for job: Job) -> (pids: [Int32], unsettled: Bool) {
        let ownEntry = Array("\(job.isHook ? hookVariable : jobVariable)=\(job.id)".utf8)
        let hookPrefix = Array("\(hookVariable)=".utf8)
        let directoryEntry = Array("\(stateDirectoryVariable)=\(job.stateDirectory)".utf8)
        let matches = { (entries: [ArraySlice<UInt8>]) -> Bool in
            guard entries.contains(where: { $0.elementsEqual(ownEntry) }),
                entries.contains(where: { $0.elementsEqual(directoryEntry) })
            else { return false }
            // A hook carries the ORCHD_JOB_ID of the job that fired it, but is not the job's.
            return job.isHook || !entries.contains(where: { $0.starts(with: hookPrefix) })
        }
        // Each descendant's environment is read as the walk finds it, before its children
        // (ProcessTree.descendants says why that misses no process that exits meanwhile).
        var found: [Int32] = []
        var unsettled = false
        var executing: [Int32] = []
        /// Whether `pid` was executing; takes it when it is the job's.
        func take(_ pid: Int32) -> Bool {
            switch read(pid) {
            case .environment(let environ): if matches(environ.split(separator: 0)) { found.append(pid) }
            case .executing: return true
            case .gone: break
            }
            return false
        }
        let walked = ProcessTree.daemonDescendants { pid, handedOver in
            // A job's main process moves too when the thread that spawned it ends: no orphan.
            if handedOver && !SpawnedProcesses.isSpawned(pid) { unsettled = true }
            if take(pid) { executing.append(pid) }
        }
        guard walked != nil else { return (scan(everyProcess, matches), false) }
        // Read once more after the walk, by when most have their new image's environment.
        for pid in executing where take(pid) { unsettled = true }
        return (found, unsettled)
    }

    private static func groups(of pids: [Int32]) -> [Int32] {
        Set(pids.map { getpgid($0) }.filter { $0 > 1 }).sorted()
    }

    /// The pids (other than orchd's) among those `list` returns whose environment entries
    /// satisfy `matches`: a look at processes that are not orchd's descendants.
    ///
    /// A listing is read before any environment, so a process that exits after it was listed,
    /// having started another, would be missed with its successor: listed in no look, and a
    /// chain of processes each starting the next and exiting hides so at many a look. So
    /// when a listed process turned out gone (no environment to read: exited, or a zombie),
    /// the candidates are listed again and the new ones read, until a listing brings none or
    /// every process read was there (at most ``mostListings`` listings): a live successor is
    /// in the next listing. A process caught executing is read again with the next listing.
    /// Newest first: pids are handed out rising.
    private static func scan(_ list: () -> [Int32], _ matches: ([ArraySlice<UInt8>]) -> Bool) -> [Int32] {
        var pids: [Int32] = []
        var looked: Set<Int32> = []
        for _ in 0..<mostListings {
            let fresh = list().filter { looked.insert($0).inserted }
            var someGone = false
            for pid in fresh.sorted(by: >) where pid > 1 && pid != getpid() {
                switch read(pid) {
                case .environment(let environ): if matches(environ.split(separator: 0)) { pids.append(pid) }
                case .executing:
                    looked.remove(pid)
                    someGone = true
                case .gone: someGone = true
                }
            }
            if !someGone { break }
        }
        return pids
    }

    /// What a look reads of one process.
    enum Reading {
        /// Its environment (`NUL`-separated entries; empty for a process started without one).
        case environment([UInt8])
        /// In the middle of execve(2): its new image's environment and command line are not set
        /// up yet, so both read as empty for a moment.
        case executing
        /// Exited, or a zombie.
        case gone
    }

    /// Reads the environment of `pid` (proc_pid_environ(5)). An empty one is told apart from a
    /// zombie's (`/proc/PID/stat`) and from one not set up yet (an empty command line,
    /// proc_pid_cmdline(5): every program has one once it runs, a zombie or one executing has
    /// none), so a chain of processes each executing the next is not taken for gone when a
    /// look catches its one live process executing.
    static func read(_ pid: Int32) -> Reading {
        guard let bytes = ProcStat.readFile("/proc/\(pid)/environ") else { return .gone }
        if !bytes.isEmpty { return .environment(bytes) }
        guard let state = ProcStat.fields(pid: pid)?.first, state != "Z", state != "X",
            let commandLine = ProcStat.readFile("/proc/\(pid)/cmdline")
        else { return .gone }
        return commandLine.isEmpty ? .executing : .environment([])
    }

    /// How many times one look lists its candidates at most: a bound on a machine whose new
    /// processes never stop coming.
    static let mostListings = 8

    /// Every process's pid, from `/proc`.
    private static func everyProcess() -> [Int32] {
        ProcStat.entryNames(of: "/proc").compactMap { Int32($0) }
    }
}
