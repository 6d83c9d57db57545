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

    /// The process groups holding a process whose environment names this job of this daemon,
    /// from a scan of `/proc/PID/environ` (proc_pid_environ(5); readable for our own uid, or
    /// as root).
    /// - Returns: the process group IDs, each once.
    static func processGroups(ofJob id: Int64, stateDirectory: String) -> [Int32] {
        let jobEntry = Array("\(jobVariable)=\(id)".utf8)
        let directoryEntry = Array("\(stateDirectoryVariable)=\(stateDirectory)".utf8)
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var groups: Set<Int32> = []
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
            let group = getpgid(pid)
            if group > 1 { groups.insert(group) }
        }
        return groups.sorted()
    }
}
