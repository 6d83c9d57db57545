import Glibc

/// Why the control socket could not be set up.
public enum ControlSocketError: Error, Sendable, CustomStringConvertible {
    /// Another process accepts connections on this socket: most likely a second orchd.
    case inUse(String)
    /// Something other than a socket is in the way.
    case notASocket(String)
    /// The path does not fit `sun_path` (107 bytes, unix(7)).
    case pathTooLong(String)
    /// A system call failed.
    case system(call: String, path: String, errno: Int32)

    /// The errno to report to systemd (`ERRNO=`), when there is one.
    public var errno: Int32 {
        switch self {
        case .inUse: EADDRINUSE
        case .notASocket: ENOTSOCK
        case .pathTooLong: ENAMETOOLONG
        case .system(_, _, let code): code
        }
    }

    public var description: String {
        switch self {
        case .inUse(let path):
            "another orchd is already listening on \(path); stop it first, or pass another --socket"
        case .notASocket(let path):
            "\(path) exists and is not a socket; remove it or pass another --socket"
        case .pathTooLong(let path):
            "socket path too long (max 107 bytes): \(path)"
        case .system(let call, let path, let code):
            "\(call) \(path): \(String(cString: strerror(code)))"
        }
    }
}
