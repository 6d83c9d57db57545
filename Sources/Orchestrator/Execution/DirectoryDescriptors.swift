import Glibc
import Synchronization

/// Open descriptors of the directories job log files are created in, kept for the daemon's
/// life, so that creating a log file is one openat(2) relative to its directory instead of a
/// walk of the whole path, with no mkdir or stat per job.
///
/// Keyed by directory path, so any layout of log directories fits (one directory, or one per
/// owner uid below it): each is opened on its first use. A directory removed while the daemon
/// runs leaves a stale descriptor: the kernel refuses to create a file in a deleted directory
/// (`ENOENT`, openat(2)), and the spawned child then opens the full path instead
/// (`cposix_spawn_log`).
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

    /// The kept descriptor of the directory `path` is in, and the file's name in it.
    /// - Parameter path: a file path.
    /// - Returns: the directory's descriptor (-1 when it cannot be opened: the caller then uses
    ///   the full path, whose open(2) reports why), and the last component of `path`.
    func directory(of path: String) -> (fd: Int32, name: String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return (-1, path) }
        let directory = slash == path.utf8.startIndex ? "/" : String(path[..<slash])
        let name = String(path[path.utf8.index(after: slash)...])
        let fd = descriptors.withLock { open -> Int32 in
            if let fd = open[directory] { return fd }
            let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 { open[directory] = fd }
            return fd
        }
        return (fd, name)
    }
}
