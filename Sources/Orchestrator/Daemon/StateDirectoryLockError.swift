import Glibc

/// Why the state directory could not be locked.
public enum StateDirectoryLockError: Error, Sendable, CustomStringConvertible {
    /// Another orchd runs on this state directory.
    case heldByAnotherDaemon(path: String, pid: Int32?)
    /// A system call failed.
    case system(call: String, path: String, errno: Int32)

    /// The errno to report to systemd (`ERRNO=`).
    public var errno: Int32 {
        switch self {
        case .heldByAnotherDaemon: EBUSY
        case .system(_, _, let code): code
        }
    }

    public var description: String {
        switch self {
        case .heldByAnotherDaemon(let path, let pid):
            "another orchd\(pid.map { " (pid \($0))" } ?? "") is already running with this state directory (lock \(path) is held)"
        case .system(let call, let path, let code):
            "\(call) \(path): \(String(cString: strerror(code)))"
        }
    }
}
