#if canImport(Glibc)
import Glibc
#endif

/// Why a ``VarlinkClient`` call failed.
public enum VarlinkClientError: Error, Sendable, CustomStringConvertible {
    /// The socket could not be reached: `ENOENT`/`ECONNREFUSED` when no daemon listens,
    /// `EACCES` when the caller may not use it.
    case connectFailed(path: String, errno: Int32)
    /// The socket path is longer than `sun_path` allows (107 bytes).
    case pathTooLong(String)
    /// The connection broke (errno 0: the daemon closed it).
    case connectionLost(errno: Int32)
    /// The connection broke while the call was being written (`EPIPE`, `ECONNRESET`), and the
    /// daemon sent no error before closing, or it was reset before the call's first reply
    /// (the daemon closed it with bytes of the call unread): either way the daemon never had
    /// the call's closing NUL byte, and it acts on a call only once that has arrived, so
    /// nothing of the call was done.
    case callNotDelivered(errno: Int32)
    /// The peer sent something that is not a valid Varlink reply.
    case protocolViolation(String)
    /// The daemon answered with an error.
    case remote(VarlinkError)

    public var description: String {
        switch self {
        case .connectFailed(let path, let code):
            "cannot connect to \(path): \(String(cString: strerror(code)))"
        case .pathTooLong(let path):
            "socket path too long (max 107 bytes): \(path)"
        case .connectionLost(let code):
            code == 0 ? "the daemon closed the connection" : "connection lost: \(String(cString: strerror(code)))"
        case .callNotDelivered(let code):
            "the connection broke while the call was being sent (\(String(cString: strerror(code)))), so it was not received"
        case .protocolViolation(let what):
            "protocol error: \(what)"
        case .remote(let error):
            error.description
        }
    }
}
