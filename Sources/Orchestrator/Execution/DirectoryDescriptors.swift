import Glibc
import Synchronization

/// Open descriptors of the directories job log files are created in, kept for the daemon's
/// life, so that creating a log file is one openat(2) relative to its directory instead of a
/// walk of the whole path, with no mkdir per job.
///
/// Keyed by directory path, so any layout of log directories fits (one directory, or one per
/// owner uid below it). A directory is made ready (``LogDirectory/prepare(_:owner:)``: created
/// when missing, given to its owner, mode 0700) before its descriptor is first opened, and
/// again whenever the kept descriptor no longer fits: its directory was removed (a new one
/// made by `prepare` is then opened instead of the deleted one), or its owner or mode is no
/// longer what `prepare` makes. One fstat(2) of the kept descriptor per use tells.
final class DirectoryDescriptors: Sendable {
    /// The open directories, by path: `O_RDONLY | O_DIRECTORY | O_CLOEXEC` descriptors.
    private let descriptors = Mutex<[String: Int32]>([:])

    /// Creates an empty cache.
    init() {}

    deinit {
        descriptors.withLock { open in
            for fd in open.values { close(fd) }
        }
    }

    /// The kept descriptor of the directory `path` is in, made ready for `owner`, and the
    /// file's name in it.
    /// - Parameters:
    ///   - path: a file path.
    ///   - owner: the user the directory must belong to (mode 0700), or `nil` for the
    ///     daemon's own (created when missing, otherwise left as it is).
    /// - Returns: the directory's descriptor (-1 when it cannot be opened: the caller then uses
    ///   the full path, whose open(2) reports why), and the last component of `path`.
    /// - Throws: ``LaunchError`` when the directory cannot be made ready
    ///   (``LogDirectory/prepare(_:owner:)``).
    func directory(of path: String, owner: UserAccount?) throws(LaunchError) -> (fd: Int32, name: String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return (-1, path) }
        let directory = slash == path.utf8.startIndex ? "/" : String(path[..<slash])
        let name = String(path[path.utf8.index(after: slash)...])
        let fd = try descriptors.withLock { open throws(LaunchError) -> Int32 in
            if let fd = open[directory] {
                if Self.fits(fd, owner: owner) { return fd }
                close(fd)
                open[directory] = nil
            }
            if directory != "/" { try LogDirectory.prepare(directory, owner: owner) }
            // A user's directory is theirs, but its parent is not: it cannot have been
            // replaced by a link since `prepare` looked; O_NOFOLLOW says so once more.
            let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (owner == nil ? 0 : O_NOFOLLOW))
            if fd >= 0 && Self.fits(fd, owner: owner) { open[directory] = fd; return fd }
            if fd >= 0 { close(fd) }
            return -1
        }
        return (fd, name)
    }

    /// Whether a kept descriptor still names a directory as ``LogDirectory/prepare(_:owner:)``
    /// leaves it: not removed, and with `owner` that user's, mode 0700.
    private static func fits(_ fd: Int32, owner: UserAccount?) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_nlink > 0 else { return false }
        guard let owner else { return true }
        return info.st_uid == owner.uid && info.st_gid == owner.gid && info.st_mode & 0o7777 == 0o700
    }
}
