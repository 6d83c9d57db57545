import CPosix
import Foundation
import Glibc

/// One cgroup v2 directory, addressed by its absolute path in the cgroup2 mount (e.g.
/// `/sys/fs/cgroup/unified/orchd-1a2b3c4d/job-7-1`). The operations are thin wrappers over
/// the interface files of cgroups(7) and the kernel's cgroup-v2.rst: `cgroup.procs`,
/// `cgroup.events`, `cgroup.kill`.
public struct Cgroup: Hashable, Sendable, CustomStringConvertible {
    /// The directory's absolute path.
    public var path: String

    /// Names a cgroup directory.
    /// - Parameter path: its absolute path in the cgroup2 mount.
    public init(path: String) {
        self.path = path
    }

    /// The path.
    public var description: String { path }

    /// A child cgroup of this one.
    /// - Parameter name: the child's directory name.
    public func child(_ name: String) -> Cgroup {
        Cgroup(path: path + "/" + name)
    }

    /// The directory's last path component.
    public var name: String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Creates the directory (mkdir(2), mode 0755); one that already exists is fine.
    /// - Returns: `0`, or the `errno` value.
    @discardableResult
    public func create() -> Int32 {
        mkdir(path, 0o755) == 0 || errno == EEXIST ? 0 : errno
    }

    /// Removes the directory if nothing is in it (rmdir(2)): no live process and no child
    /// cgroup. One system call: the test for leftovers at a job's end.
    /// - Returns: `0` when removed or already gone, else the `errno` value (`EBUSY`: a process
    ///   or a child cgroup is in it).
    public func removeIfEmpty() -> Int32 {
        rmdir(path) == 0 || errno == ENOENT ? 0 : errno
    }

    /// Removes the directory (rmdir(2)), and first, when the kernel refuses it (`EBUSY`), the
    /// child cgroups below it that are empty: a job may make cgroups of its own in its cgroup,
    /// which outlive its processes and would keep its cgroup for ever. rmdir never removes a
    /// cgroup that has a live process, so one still populated stays, and so does this one.
    /// - Returns: `0` when removed or already gone, else the `errno` value (`EBUSY`: a process
    ///   is left in it or below).
    @discardableResult
    public func remove() -> Int32 {
        let code = removeIfEmpty()
        guard code == EBUSY else { return code }
        let subgroups = children()
        guard !subgroups.isEmpty else { return code }
        for name in subgroups { child(name).remove() }
        return removeIfEmpty()
    }

    /// Whether the directory exists.
    public var exists: Bool {
        access(path, F_OK) == 0
    }

    /// Opens the directory for `CLONE_INTO_CGROUP` (clone(2)).
    /// - Returns: a close-on-exec fd, or `-1` with `errno` set.
    public func openDirectory() -> Int32 {
        open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    /// Whether any live process is in this cgroup or below: the `populated` key of
    /// `cgroup.events` (zombies do not count). A cgroup that no longer exists is not
    /// populated.
    ///
    /// Unreadable for want of descriptors says nothing: it counts as populated, so that no
    /// teardown ends, and no job is over, on a read that failed (``populatedIfReadable``).
    public var isPopulated: Bool {
        populatedIfReadable ?? true
    }

    /// Whether a live process is in the cgroup or below, or `nil` when `cgroup.events` cannot
    /// be read now for want of descriptors or memory (``ProcStat/isResourceShortage(_:)``).
    /// A cgroup that no longer exists is not populated.
    var populatedIfReadable: Bool? {
        guard let bytes = ProcStat.readFile(path + "/cgroup.events") else {
            return ProcStat.isResourceShortage(errno) ? nil : false
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("populated ") {
            return line.dropFirst("populated ".count).trimmingCharacters(in: .whitespaces) != "0"
        }
        return false
    }

    /// The pids in this cgroup itself (`cgroup.procs`), not in its children.
    public func processes() -> [Int32] {
        guard let bytes = ProcStat.readFile(path + "/cgroup.procs") else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
    }

    /// Sends `signal` to every process listed in `cgroup.procs` (kill(2)). A process that
    /// forks meanwhile may add a member that misses the signal; ``kill()`` has no such race.
    /// - Parameter signal: the signal number.
    public func signal(_ signal: Int32) {
        for pid in processes() where pid > 1 {
            Glibc.kill(pid, signal)
        }
    }

    /// Kills every process in the cgroup and below at once, forks in flight included, by
    /// writing `1` to `cgroup.kill` (Linux 5.14).
    /// - Returns: `0`, or the `errno` value (`ENOENT` on kernels without `cgroup.kill`).
    @discardableResult
    public func kill() -> Int32 {
        let fd = open(path + "/cgroup.kill", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return write(fd, "1", 1) == 1 ? 0 : errno
    }

    /// Freezes (`true`) or thaws (`false`) every process in the cgroup and below by writing
    /// `1` or `0` to `cgroup.freeze` (Linux 5.2, cgroup v2 freezer). A frozen process takes
    /// no signal until thawed, except SIGKILL: `cgroup.kill` works on a frozen cgroup.
    /// - Returns: `0`, or the `errno` value.
    @discardableResult
    public func freeze(_ frozen: Bool) -> Int32 {
        let fd = open(path + "/cgroup.freeze", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return write(fd, frozen ? "1" : "0", 1) == 1 ? 0 : errno
    }

    /// Moves a process (all its threads) into this cgroup by writing its pid to
    /// `cgroup.procs`.
    /// - Parameter pid: the process.
    /// - Returns: `0`, or the `errno` value.
    public func adopt(_ pid: Int32) -> Int32 {
        let fd = open(path + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        let text = Array(String(pid).utf8)
        return write(fd, text, text.count) == text.count ? 0 : errno
    }

    /// The names of the child cgroups (the subdirectories).
    public func children() -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return entries.filter { name in
            var info = stat()
            return stat(path + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
        }.sorted()
    }

    /// Blocks until the cgroup has no live process, waiting on inotify(7) events of its
    /// `cgroup.events` with poll(2).
    ///
    /// For start-up recovery only, before the daemon serves anyone: a killed job must be down
    /// before it is retried, or two copies would run at once.
    /// - Parameter timeout: the longest wait.
    /// - Returns: whether the cgroup is empty (or gone).
    @discardableResult
    public func waitUntilEmpty(timeout: Duration) -> Bool {
        let fd = cposix_inotify_init()
        guard fd >= 0 else { return !isPopulated }
        defer { close(fd) }
        guard cposix_inotify_watch_modify(fd, path + "/cgroup.events") >= 0 else { return !isPopulated }
        let deadline = ContinuousClock.now + timeout
        var wds = [Int32](repeating: 0, count: 16)
        while isPopulated {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            _ = poll(&descriptor, 1, milliseconds)
            _ = cposix_inotify_read_wds(fd, &wds, Int32(wds.count))
        }
        return true
    }
}
