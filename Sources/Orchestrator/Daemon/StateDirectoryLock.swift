import Foundation
import Glibc

/// The exclusive lock that allows one daemon per state directory: `flock(2)` on
/// `orchd.lock` and on the directory itself, held for the daemon's life and released by the
/// kernel when it exits, even by `kill -9`.
///
/// The directory's lock is what holds when `orchd.lock` is removed (a cleanup script, an
/// admin): the file's alone let a second daemon start on a new file, whose recovery killed the
/// first one's running jobs. The file's lock stays, for an orchd of before the directory's lock
/// running while a newer one starts, and for the pid it records.
public final class StateDirectoryLock: Sendable {
    private let fd: Int32
    /// The state directory, open for its lock (where the file system has no `flock(2)` for
    /// directories, open without it: the file's lock then stands alone).
    private let directoryFD: Int32
    /// The lock file's path.
    public let path: String

    /// Creates the state directory if needed (0700; 0711 for a root daemon, whose users may
    /// pass through to their own log directories but list nothing) and takes the lock
    /// without waiting.
    /// - Parameter stateDirectory: the daemon's state directory.
    /// - Throws: ``StateDirectoryLockError/heldByAnotherDaemon(path:pid:)`` when another
    ///   daemon holds it; ``StateDirectoryLockError/system(call:path:errno:)`` otherwise.
    public init(stateDirectory: String) throws(StateDirectoryLockError) {
        try Self.createDirectory(stateDirectory)
        path = stateDirectory + "/orchd.lock"
        // Not followed: orchd writes its pid into the file, and a link put there would have it
        // write wherever the link points (root's daemon into /etc/passwd).
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            if errno == ELOOP { throw .notAFile(path: path) }
            throw .system(call: "open", path: path, errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .notAFile(path: path)
        }
        let holder = Self.recordedPid(fd)
        guard Self.lock(fd, holder: holder) else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw .heldByAnotherDaemon(path: path, pid: holder) }
            throw .system(call: "flock", path: path, errno: code)
        }
        directoryFD = open(stateDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else {
            let code = errno
            close(fd)
            throw .system(call: "open", path: stateDirectory, errno: code)
        }
        if !Self.lock(directoryFD, holder: holder) {
            let code = errno
            if code == EWOULDBLOCK {
                close(directoryFD)
                close(fd)
                throw .heldByAnotherDaemon(path: stateDirectory, pid: nil)
            }
            // No flock(2) for a directory here: the file's lock stands alone, as before.
            DaemonLog.warning("cannot lock the state directory \(stateDirectory) itself (\(String(cString: strerror(code)))): only \(path) keeps a second orchd out")
        }
        // Record our pid for the error message a second daemon prints.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    deinit {
        close(directoryFD)
        close(fd)
    }

    /// How long a lock whose daemon is gone is waited for.
    static let departedHolderWait: Duration = .seconds(2)

    /// Takes the lock on `fd` without waiting; but when `holder`, the daemon whose pid the lock
    /// file records, is gone, waits up to ``departedHolderWait`` for it. What holds it then is a
    /// child of that daemon's that was between its spawn and its exec when the daemon died: the
    /// child holds a copy of the descriptor until its exec closes it, and a restart at once
    /// (systemd's, or a test's after a crash) was refused as "another orchd is already running".
    /// - Returns: whether the lock is held; when not, `errno` says why.
    private static func lock(_ fd: Int32, holder: Int32?) -> Bool {
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        guard errno == EWOULDBLOCK else { return false }
        guard let pid = holder, pid > 0, kill(pid, 0) != 0, errno == ESRCH else {
            errno = EWOULDBLOCK
            return false
        }
        let clock = ContinuousClock()
        let deadline = clock.now + departedHolderWait
        while clock.now < deadline {
            // Polled, at start-up only: a blocking flock(2) has no timeout, and a thread left
            // blocked in one would take the lock after this daemon had given up.
            usleep(10_000)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            guard errno == EWOULDBLOCK else { return false }
        }
        errno = EWOULDBLOCK
        return false
    }

    /// The pid the daemon holding the lock recorded in the file, if any.
    private static func recordedPid(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Creates the state directory and any directory above it that is missing (0700; the
    /// state directory itself 0711 for a root daemon).
    /// - Throws: ``StateDirectoryLockError/system(call:path:errno:)`` when mkdir(2) fails.
    static func createDirectory(_ path: String) throws(StateDirectoryLockError) {
        do {
            // Run by root (the system service), users may pass through to their own log directory.
            try DirectoryPath.create(path) { isLast in isLast && geteuid() == 0 ? 0o711 : 0o700 }
        } catch {
            throw .system(call: "mkdir", path: error.path, errno: error.errno)
        }
    }
}

/// Why the state directory could not be locked.
public enum StateDirectoryLockError: Error, Sendable, CustomStringConvertible {
    /// Another orchd runs on this state directory.
    case heldByAnotherDaemon(path: String, pid: Int32?)
    /// A system call failed.
    case system(call: String, path: String, errno: Int32)
    /// The lock file is not a regular file (a symbolic link, a named pipe, a directory).
    case notAFile(path: String)

    /// The errno to report to systemd (`ERRNO=`).
    public var errno: Int32 {
        switch self {
        case .heldByAnotherDaemon: EBUSY
        case .system(_, _, let code): code
        case .notAFile: EINVAL
        }
    }

    public var description: String {
        switch self {
        case .heldByAnotherDaemon(let path, let pid):
            "another orchd\(pid.map { " (pid \($0))" } ?? "") is already running with this state directory (lock \(path) is held)"
        case .system(let call, let path, let code):
            "\(call) \(path): \(String(cString: strerror(code)))"
        case .notAFile(let path):
            "\(path) is not a regular file (a symbolic link, a named pipe or a directory); orchd will not write its pid through it: move it away"
        }
    }
}
