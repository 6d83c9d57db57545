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

    /// The process groups holding a process whose environment names this job of this daemon,
    /// from a scan of `/proc/PID/environ` (proc_pid_environ(5); readable for our own uid, or
    /// as root). Hook processes are not the job's.
    /// - Returns: the process group IDs, each once.
    static func processGroups(ofJob id: Int64, stateDirectory: String) -> [Int32] {
        // Every process: a previous daemon's jobs are not this one's descendants.
        groups(of: processes(of: Job(id: id, stateDirectory: stateDirectory), among: nil))
    }

    /// The process groups holding a process of any hook run of this daemon (recovery: hooks
    /// a previous incarnation left running).
    /// - Parameter stateDirectory: the daemon's state directory.
    /// - Returns: the process group IDs, each once.
    static func processGroupsOfHooks(stateDirectory: String) -> [Int32] {
        let hookPrefix = Array("\(hookVariable)=".utf8)
        let directoryEntry = Array("\(stateDirectoryVariable)=\(stateDirectory)".utf8)
        return groups(of: scan(nil) { entries in
            entries.contains(where: { $0.starts(with: hookPrefix) }) && entries.contains(where: { $0.elementsEqual(directoryEntry) })
        })
    }

    /// The live processes whose environment names this job (or hook run) of this daemon,
    /// looked for among the daemon's descendants when it is a child subreaper (where every
    /// process of its jobs stays; ``ProcessTree/daemonDescendants()``), else among every
    /// process. Zombies have no readable environment and are left out.
    /// - Parameter job: the job or hook run, and daemon.
    /// - Returns: their pids.
    static func processes(of job: Job) -> [Int32] {
        processes(of: job, among: ProcessTree.daemonDescendants())
    }

    /// The processes of `job` among `candidates`, or among every process when `nil`.
    static func processes(of job: Job, among candidates: [Int32]?) -> [Int32] {
        let ownEntry = Array("\(job.isHook ? hookVariable : jobVariable)=\(job.id)".utf8)
        let hookPrefix = Array("\(hookVariable)=".utf8)
        let directoryEntry = Array("\(stateDirectoryVariable)=\(job.stateDirectory)".utf8)
        return scan(candidates) { entries in
            guard entries.contains(where: { $0.elementsEqual(ownEntry) }),
                entries.contains(where: { $0.elementsEqual(directoryEntry) })
            else { return false }
            // A hook carries the ORCHD_JOB_ID of the job that fired it, but is not the job's.
            return job.isHook || !entries.contains(where: { $0.starts(with: hookPrefix) })
        }
    }

    private static func groups(of pids: [Int32]) -> [Int32] {
        Set(pids.map { getpgid($0) }.filter { $0 > 1 }).sorted()
    }

    /// The pids (other than orchd's) among `candidates`, or among every process when `nil`,
    /// whose environment entries satisfy `matches`.
    private static func scan(_ candidates: [Int32]?, _ matches: ([ArraySlice<UInt8>]) -> Bool) -> [Int32] {
        var pids: [Int32] = []
        func look(at pid: Int32) {
            guard pid > 1, pid != getpid(), let environ = ProcStat.readFile("/proc/\(pid)/environ") else { return }
            if matches(environ.split(separator: 0)) { pids.append(pid) }
        }
        if let candidates {
            candidates.forEach(look)
            return pids
        }
        for name in ProcStat.entryNames(of: "/proc") {
            if let pid = Int32(name) { look(at: pid) }
        }
        return pids
    }
}
