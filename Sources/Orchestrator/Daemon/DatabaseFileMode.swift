import Glibc

/// Keeps the job database readable by the daemon's user alone (mode 0600), whatever the
/// umask: it holds every user's commands and environments, and under the system service jobs
/// of other users run on the same machine.
enum DatabaseFileMode {
    /// Creates the database file empty with mode 0600 when missing (SQLite takes an empty file
    /// for a new database, and gives its `-wal` and `-shm` files the database's mode), or sets
    /// an existing one's mode to 0600, before SQLite opens it: the file is never readable by
    /// others, not even for an instant.
    /// - Throws: ``Failure`` when the file can be neither created nor changed.
    static func restrict(_ path: String) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 {
            _ = fchmod(fd, 0o600)
            close(fd)
            return
        }
        guard errno == EEXIST else { throw Failure(path: path, errno: errno) }
        var info = stat()
        // Something that is not a regular file is DatabaseOpenFailure's to explain.
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 else { return }
        guard chmod(path, info.st_mode & 0o700) == 0 else { throw Failure(path: path, errno: errno) }
    }

    /// Narrows the `-wal` and `-shm` files made before ``restrict(_:)`` existed to the
    /// owner alone.
    static func restrictCompanions(_ path: String) {
        for companion in [path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(companion, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 else { continue }
            _ = chmod(companion, info.st_mode & 0o700)
        }
    }

    /// The database file's mode could not be set.
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var errno: Int32
        var description: String { "cannot make \(path) readable by orchd alone: \(String(cString: strerror(errno)))" }
    }
}
