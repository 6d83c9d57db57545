import CPosix
import Foundation
import Glibc

// MARK: - Subtrees an earlier daemon of this state directory used

extension Containment {
    /// The file in the state directory naming the job cgroups' subtree of the daemon that last
    /// ran there with cgroup containment outside systemd: one absolute path and a newline.
    public static let subtreeRecordName = "cgroup-subtree"

    /// A subtree an earlier daemon of this state directory left, as
    /// ``clearEarlierSubtrees()`` found and cleared it.
    public struct EarlierSubtree: Hashable, Sendable {
        /// The subtree's path.
        public var path: String
        /// Its job and hook groups that still held processes, killed.
        public var killedGroups: [String]
        /// Whether the subtree is gone now; `false` when a process would not die, or the
        /// subtree holds cgroups that are not orchd's.
        public var removed: Bool
    }

    /// Kills what an earlier daemon of this state directory left in a job cgroup subtree other
    /// than this daemon's, and removes that subtree: the one the state directory's record
    /// names (``recordSubtree()``), and the one a daemon started from this daemon's cgroup
    /// would use (a daemon that ran with cgroup containment, before this one started without).
    ///
    /// Outside systemd the subtree sits under the cgroup of whoever started orchd (a login's
    /// session scope, a shell's cgroup), so a daemon restarted from another one after a
    /// `kill -9` has a subtree of its own. Recovery kills what is left in its own subtree and
    /// whatever carries a job's identity in its environment; a process that had left its
    /// process group and cleared its environment, in the other subtree, went on running beside
    /// the job's retry. A delegated service's subtree is not recorded: when orchd dies, systemd
    /// kills every process of the service's cgroup itself.
    ///
    /// Call at start-up, holding the state directory's lock, before recovery and before any job
    /// starts.
    /// - Returns: the subtrees found, in the order cleared.
    public func clearEarlierSubtrees() -> [EarlierSubtree] {
        var candidates: [String] = []
        let beside = Self.subtreePath(stateDirectory: stateDirectory)
        // The recorded one only when it is this directory's (its mark): a copy of the state
        // directory (cp -a) records the subtree of the daemon that still runs on the original,
        // and a record can be written by hand.
        if let recorded = Self.recordedSubtree(stateDirectory: stateDirectory), recorded != beside,
            let mark = Self.stateDirectoryMark(stateDirectory), Self.mark(ofSubtree: recorded) == mark
        {
            candidates.append(recorded)
        }
        if let beside { candidates.append(beside) }
        return candidates.filter { $0 != subtree?.path && Cgroup(path: $0).exists }.map { path in
            let earlier = Cgroup(path: path)
            let groups = earlier.children().filter { $0.hasPrefix("job-") || $0.hasPrefix("hook-") }.map { earlier.child($0) }
            let populated = groups.filter(\.isPopulated)
            for group in populated where group.kill() != 0 { group.signal(SIGKILL) }
            for group in populated { group.waitUntilEmpty(timeout: .seconds(5)) }
            for group in groups { group.remove() }
            return EarlierSubtree(path: path, killedGroups: populated.map(\.name), removed: earlier.remove() == 0)
        }
    }

    /// Records this daemon's subtree in the state directory for the next daemon's
    /// ``clearEarlierSubtrees()``, made durable (fsync(2) of the file, then of the directory)
    /// before any job starts in it. Without a subtree of its own (process-group containment, a
    /// delegated service), the record is removed once the subtree it names is gone.
    /// - Returns: why the record could not be written, or `nil`.
    public func recordSubtree() -> String? {
        let path = stateDirectory + "/" + Self.subtreeRecordName
        let recorded = Self.recordedSubtree(stateDirectory: stateDirectory)
        guard let subtree, !delegated else {
            if let recorded, Cgroup(path: recorded).exists { return nil }
            return unlink(path) == 0 || errno == ENOENT ? nil : "cannot remove \(path): \(String(cString: strerror(errno)))"
        }
        guard recorded != subtree.path else { return nil }
        let temporary = path + ".new"
        let bytes = Array((subtree.path + "\n").utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return "cannot create \(temporary): \(String(cString: strerror(errno)))" }
        let written = write(fd, bytes, bytes.count)
        let code = written == bytes.count ? (fsync(fd) == 0 ? 0 : errno) : (written < 0 ? errno : ENOSPC)
        close(fd)
        guard code == 0, rename(temporary, path) == 0 else {
            let failure = code != 0 ? code : errno
            unlink(temporary)
            return "cannot write \(path): \(String(cString: strerror(failure)))"
        }
        let directory = open(stateDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            defer { close(directory) }
            if fsync(directory) != 0 { return "cannot sync \(stateDirectory) to disk: \(String(cString: strerror(errno)))" }
        }
        return nil
    }

    /// The extended attribute that marks a subtree with the state directory it serves
    /// (``markSubtree()``).
    static let markAttribute = "trusted.orchd.state-directory"

    /// What names the state directory in a subtree's mark: its device and inode
    /// (`DEV:INO`, stat(2)), the same through any name of it (a bind mount, a symbolic link),
    /// different for a copy; `nil` when it cannot be read.
    static func stateDirectoryMark(_ stateDirectory: String) -> String? {
        var info = stat()
        guard stat(stateDirectory, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino)"
    }

    /// The mark a subtree carries, or `nil`.
    static func mark(ofSubtree path: String) -> String? {
        var value = [UInt8](repeating: 0, count: 64)
        let count = cposix_getxattr(path, markAttribute, &value, UInt(value.count))
        guard count > 0 else { return nil }
        return String(decoding: value[..<count], as: UTF8.self)
    }

    /// Marks this daemon's own subtree (not a delegated service's) with its state directory
    /// (``markAttribute``, a `trusted.` attribute: only root sets or reads it), so that a later
    /// daemon clears a recorded subtree only when it served the same directory.
    /// - Returns: why it could not, or `nil`.
    public func markSubtree() -> String? {
        guard let subtree, !delegated else { return nil }
        guard let mark = Self.stateDirectoryMark(stateDirectory) else { return "cannot stat \(stateDirectory)" }
        let bytes = Array(mark.utf8)
        guard cposix_setxattr(subtree.path, Self.markAttribute, bytes, UInt(bytes.count)) == 0 else {
            return "cannot mark \(subtree.path) (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    /// The subtree the state directory's record names, when the record is one orchd wrote: an
    /// absolute path in the cgroup2 mount, without `.` or `..`, ending in a subtree's name
    /// (``subtreeName(stateDirectory:)``'s form), so that no other cgroup is ever cleared.
    static func recordedSubtree(stateDirectory: String) -> String? {
        guard let bytes = ProcStat.readFile(stateDirectory + "/" + subtreeRecordName), bytes.last == UInt8(ascii: "\n"),
            let mount = cgroup2Mount()
        else { return nil }
        let path = String(decoding: bytes.dropLast(), as: UTF8.self)
        let components = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard path.hasPrefix(mount + "/"), !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }),
            let name = components.last, name.hasPrefix("orchd-"), name.count == 22, name.dropFirst(6).allSatisfy(\.isHexDigit)
        else { return nil }
        return path
    }
}
