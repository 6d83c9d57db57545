import CPosix
import Foundation
import Glibc
import OrchestratorAPI

/// How orchd keeps hold of every process a job starts, including those that leave its process
/// group with setsid(2) or setpgid(2) (coreutils `timeout`, daemons, ssh).
///
/// - **cgroup**: each attempt runs in its own cgroup v2 group, `job-<id>-<attempt>`, under a
///   subtree of the daemon's, entered atomically at clone3(2) (`CLONE_INTO_CGROUP`). Teardown
///   signals every member and ends with `cgroup.kill`; a job is over when `cgroup.events` says
///   `populated 0`. Under systemd with `Delegate=yes` the subtree is the service's own cgroup
///   (orchd moves itself into its leaf `daemon`, as cgroup v2 allows processes only in
///   leaves); otherwise it is `<orchd's cgroup>/orchd-<hash of the state directory>`, so that
///   each daemon has its own and a restarted one finds its predecessor's groups.
/// - **process-group** (the fallback where no cgroup2 subtree is writable): a teardown
///   signals the job's process group and every process group holding a process whose
///   environment carries the job's `ORCHD_JOB_ID` and `ORCHD_STATE_DIR` (``ProcessIdentity``).
///
/// Hooks are contained the same way: each run in its own cgroup `hook-<n>` beside the job
/// groups, or (fallback) found by its `ORCHD_HOOK_ID` and `ORCHD_STATE_DIR`.
public final class Containment: Sendable {
    /// What the operator asked for (`orchd --containment`).
    public enum Mode: String, Sendable, CaseIterable {
        /// cgroup when a writable cgroup2 subtree exists, else process-group.
        case auto
        /// cgroup, or refuse to start.
        case cgroup
        /// process-group, even where cgroups would work (for tests and odd kernels).
        case processGroup = "process-group"
    }

    /// Why the cgroup containment could not be set up.
    public struct SetupError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What went wrong.
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The subtree holding the job cgroups; `nil` in process-group mode.
    public let subtree: Cgroup?
    /// Watches job cgroups for emptiness; `nil` in process-group mode.
    public let watcher: CgroupWatcher?
    /// `cgroup` or `process-group`: what ``io.orchd.Manager.GetInfo`` reports.
    public let name: String
    /// One line for the log: the mode, and its cgroup or why there is none.
    public let summary: String
    /// The state directory, which with a job's ID identifies its processes in the fallback.
    public let stateDirectory: String
    /// Whether orchd moved itself into `<subtree>/daemon` (systemd delegation) and should
    /// leave the subtree in place at exit.
    let delegated: Bool

    private init(subtree: Cgroup?, watcher: CgroupWatcher?, summary: String, stateDirectory: String, delegated: Bool) {
        self.subtree = subtree
        self.watcher = watcher
        self.name = subtree == nil ? "process-group" : "cgroup"
        self.summary = summary
        self.stateDirectory = stateDirectory
        self.delegated = delegated
    }

    /// Process-group containment only, e.g. for unit tests.
    /// - Parameter stateDirectory: the daemon's state directory.
    public static func processGroupOnly(stateDirectory: String, reason: String = "as configured") -> Containment {
        Containment(subtree: nil, watcher: nil, summary: "process-group (\(reason))", stateDirectory: stateDirectory, delegated: false)
    }

    /// Sets up containment for a daemon.
    /// - Parameters:
    ///   - mode: what was asked for.
    ///   - stateDirectory: the daemon's state directory (names its subtree).
    /// - Returns: the containment in force; with `.auto` the fallback when cgroups cannot be
    ///   used, its ``summary`` saying why.
    /// - Throws: ``SetupError`` when `.cgroup` was asked for and cannot be had.
    public static func setUp(mode: Mode, stateDirectory: String) throws(SetupError) -> Containment {
        if mode == .processGroup {
            return processGroupOnly(stateDirectory: stateDirectory, reason: "--containment process-group")
        }
        do {
            return try cgroupContainment(stateDirectory: stateDirectory)
        } catch {
            if mode == .cgroup { throw error }
            return processGroupOnly(stateDirectory: stateDirectory, reason: error.description)
        }
    }

    private static func cgroupContainment(stateDirectory: String) throws(SetupError) -> Containment {
        guard let mount = cgroup2Mount() else { throw SetupError("no cgroup2 file system is mounted") }
        guard let own = ownCgroupPath() else { throw SetupError("/proc/self/cgroup has no cgroup v2 entry") }
        let ownGroup = Cgroup(path: own == "/" ? mount : mount + own)
        guard access(ownGroup.path + "/cgroup.procs", F_OK) == 0 else {
            throw SetupError("orchd's cgroup \(ownGroup.path) is not visible in the cgroup2 mount")
        }
        let subtree: Cgroup
        var delegated = false
        if ownGroup.name.hasSuffix(".service") {
            // A systemd service: its cgroup is ours to divide only with Delegate=yes, which
            // systemd marks with the trusted.delegate (system) or user.delegate (user
            // manager) extended attribute.
            guard hasDelegateMark(ownGroup.path) else {
                throw SetupError("\(ownGroup.name) is not delegated (add Delegate=yes to the unit; systemd 251 or later marks it with the trusted.delegate attribute)")
            }
            let leaf = ownGroup.child("daemon")
            var code = leaf.create()
            if code == 0 { code = leaf.adopt(getpid()) }
            guard code == 0 else {
                throw SetupError("cannot move orchd into \(leaf.path): \(LaunchError.describe(code))")
            }
            subtree = ownGroup
            delegated = true
        } else {
            subtree = ownGroup.child(subtreeName(stateDirectory: stateDirectory))
            let code = subtree.create()
            guard code == 0 else {
                throw SetupError("cannot create cgroup \(subtree.path): \(LaunchError.describe(code))")
            }
        }
        guard access(subtree.path + "/cgroup.kill", F_OK) == 0 else {
            if !delegated { subtree.remove() }
            throw SetupError("the kernel has no cgroup.kill (Linux 5.14 or later is needed)")
        }
        let watcher: CgroupWatcher
        do {
            watcher = try CgroupWatcher()
        } catch {
            if !delegated { subtree.remove() }
            throw error
        }
        return Containment(
            subtree: subtree, watcher: watcher, summary: "cgroup \(subtree.path)", stateDirectory: stateDirectory,
            delegated: delegated)
    }

    /// The name of a daemon's own subtree outside systemd: `orchd-<hash of the state
    /// directory>`, stable across restarts so that recovery finds the previous incarnation's
    /// job groups, and distinct per state directory.
    public static func subtreeName(stateDirectory: String) -> String {
        "orchd-" + shortHash(stateDirectory)
    }

    /// Where a daemon started by this process (outside systemd) keeps its job cgroups, or
    /// `nil` without a cgroup2 mount.
    public static func subtreePath(stateDirectory: String) -> String? {
        guard let mount = cgroup2Mount(), let own = ownCgroupPath() else { return nil }
        return (own == "/" ? mount : mount + own) + "/" + subtreeName(stateDirectory: stateDirectory)
    }

    // MARK: - Job groups

    /// The cgroup name of one attempt of a job: `job-<id>-<attempt>`.
    public static func groupName(job id: JobID, attempt: Int) -> String {
        "job-\(id.rawValue)-\(attempt)"
    }

    /// The cgroup of one attempt of a job, or `nil` in process-group mode.
    public func cgroup(forJob id: JobID, attempt: Int) -> Cgroup? {
        subtree?.child(Self.groupName(job: id, attempt: attempt))
    }

    /// Every job cgroup in the subtree (`job-*`), e.g. those a killed daemon left behind.
    public func jobGroups() -> [Cgroup] {
        guard let subtree else { return [] }
        return subtree.children().filter { $0.hasPrefix("job-") }.map { subtree.child($0) }
    }

    /// The job cgroups of one job, any attempt.
    public func jobGroups(ofJob id: JobID) -> [Cgroup] {
        jobGroups().filter { $0.name.hasPrefix("job-\(id.rawValue)-") }
    }

    /// The identity a process-group teardown scans for; `nil` in cgroup mode, where the
    /// cgroup holds every process anyway.
    func identity(ofJob id: JobID) -> ProcessIdentity.Job? {
        subtree == nil ? ProcessIdentity.Job(id: id.rawValue, stateDirectory: stateDirectory) : nil
    }

    // MARK: - Hook groups

    /// The cgroup name of one hook run: `hook-<n>`, beside the job groups.
    public static func groupName(hook number: Int64) -> String {
        "hook-\(number)"
    }

    /// The cgroup of one hook run, or `nil` in process-group mode.
    public func cgroup(forHook number: Int64) -> Cgroup? {
        subtree?.child(Self.groupName(hook: number))
    }

    /// Every hook cgroup in the subtree (`hook-*`), e.g. those a killed daemon left behind.
    public func hookGroups() -> [Cgroup] {
        guard let subtree else { return [] }
        return subtree.children().filter { $0.hasPrefix("hook-") }.map { subtree.child($0) }
    }

    /// The identity (`ORCHD_HOOK_ID`) a process-group teardown of a hook run scans for; `nil`
    /// in cgroup mode.
    func identity(ofHook number: Int64) -> ProcessIdentity.Job? {
        subtree == nil ? ProcessIdentity.Job(id: number, stateDirectory: stateDirectory, isHook: true) : nil
    }

    /// Removes the daemon's own subtree at a clean exit, when it is empty (not a delegated
    /// service cgroup: systemd owns that, and orchd itself is in it).
    public func removeSubtree() {
        guard let subtree, !delegated else { return }
        for group in jobGroups() + hookGroups() { group.remove() }
        subtree.remove()
    }

    // MARK: - Discovery

    /// The mount point of the cgroup2 file system, from `/proc/self/mountinfo`
    /// (proc_pid_mountinfo(5): field 5 is the mount point, the field after ` - ` the type).
    public static func cgroup2Mount() -> String? {
        guard let bytes = ProcStat.readFile("/proc/self/mountinfo") else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let separator = fields.firstIndex(of: "-"), separator + 1 < fields.count,
                fields[separator + 1] == "cgroup2", fields.count > 4, fields[3] == "/"
            else { continue }
            return unescapeMountField(String(fields[4]))
        }
        return nil
    }

    /// orchd's cgroup v2 path: the `0::` line of `/proc/self/cgroup` (cgroups(7)).
    static func ownCgroupPath() -> String? {
        guard let bytes = ProcStat.readFile("/proc/self/cgroup") else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            // "/../x": outside our cgroup namespace, not addressable from the mount.
            return path.hasPrefix("/") && !path.hasPrefix("/..") ? (path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path) : nil
        }
        return nil
    }

    /// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
    private static func unescapeMountField(_ field: String) -> String {
        var bytes: [UInt8] = []
        var input = Array(field.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "\\"), input.count >= 3, let value = UInt8(String(decoding: input.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                input = input.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hasDelegateMark(_ path: String) -> Bool {
        for attribute in ["trusted.delegate", "user.delegate"] {
            var value = [UInt8](repeating: 0, count: 8)
            let count = cposix_getxattr(path, attribute, &value, UInt(value.count))
            if count > 0 && value[0] == UInt8(ascii: "1") { return true }
        }
        return false
    }

    /// 64-bit FNV-1a of the path, as 16 hex digits: stable across restarts and builds (unlike
    /// Swift's `hashValue`), distinct per state directory.
    static func shortHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
