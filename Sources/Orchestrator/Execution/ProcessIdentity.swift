import Foundation
import Glibc

/// How a job's processes carry its identity: two environment variables every job gets, by
/// which recovery finds the processes of a job whose pid was never recorded (the daemon died
/// between spawning it and committing the pid).
enum ProcessIdentity {
    /// `ORCHD_JOB_ID`: the job's ID; jobs may use it too.
    static let jobVariable = "ORCHD_JOB_ID"
    /// `ORCHD_STATE_DIR`: the daemon's state directory, so two daemons' job 7 are told apart.
    static let stateDirectoryVariable = "ORCHD_STATE_DIR"

    /// One job of one daemon, as its processes' environments name it.
    struct Job: Hashable, Sendable {
        /// The job's ID.
        var id: Int64
        /// The daemon's state directory.
        var stateDirectory: String
    }

    /// The process groups holding a process whose environment names this job of this daemon,
    /// from a scan of `/proc/PID/environ` (proc_pid_environ(5); readable for our own uid, or
    /// as root).
    /// - Returns: the process group IDs, each once.
    static func processGroups(ofJob id: Int64, stateDirectory: String) -> [Int32] {
        let groups = processes(of: Job(id: id, stateDirectory: stateDirectory)).map { getpgid($0) }
        return Set(groups.filter { $0 > 1 }).sorted()
    }

    /// The live processes whose environment names this job of this daemon. Zombies have no
    /// readable environment and are left out.
    /// - Parameter job: the job and daemon.
    /// - Returns: their pids.
    static func processes(of job: Job) -> [Int32] {
        let jobEntry = Array("\(jobVariable)=\(job.id)".utf8)
        let directoryEntry = Array("\(stateDirectoryVariable)=\(job.stateDirectory)".utf8)
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard let pid = Int32(name), pid > 1, pid != getpid(),
                let environ = ProcStat.readFile("/proc/\(pid)/environ")
            else { continue }
            let entries = environ.split(separator: 0)
            guard entries.contains(where: { $0.elementsEqual(jobEntry) }),
                entries.contains(where: { $0.elementsEqual(directoryEntry) })
            else { continue }
            pids.append(pid)
        }
        return pids
    }
}
