import CSystemd
import Glibc

/// The listening socket systemd passes when a socket unit (`orchd.socket`) activates the
/// daemon (sd_listen_fds(3)).
enum SocketActivation {
    /// The passed socket, if systemd passed one.
    ///
    /// `$LISTEN_FDS`/`$LISTEN_PID` are removed from the environment (they belong to this
    /// process only) and the fd is marked close-on-exec, so jobs never see it.
    /// - Returns: the listening fd (3), or `nil` when the daemon was not socket-activated.
    /// - Throws: ``SocketActivationError`` when systemd passed more than one fd, or one that
    ///   is not a listening Unix stream socket.
    static func listeningSocket() throws(SocketActivationError) -> Int32? {
        let count = sd_listen_fds(1)
        if count < 0 { throw .system(call: "sd_listen_fds", errno: -count) }
        if count == 0 { return nil }
        guard count == 1 else { throw .tooManySockets(count) }
        let fd = SD_LISTEN_FDS_START
        let isUnixListener = sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0)
        if isUnixListener < 0 { throw .system(call: "sd_is_socket_unix", errno: -isUnixListener) }
        guard isUnixListener > 0 else { throw .notUnixStreamListener(fd) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// The file-system path a Unix socket is bound to (getsockname(2)), for messages and
    /// `orchctl info`; `nil` for an abstract or unnamed socket.
    static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw -> String in
            let bytes = raw.prefix(max(0, Int(length) - MemoryLayout<sa_family_t>.size))
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.hasPrefix("/") ? path : nil
    }
}

/// Why the socket systemd passed cannot be used.
public enum SocketActivationError: Error, Sendable, CustomStringConvertible {
    /// More than one fd was passed; orchd listens on exactly one socket.
    case tooManySockets(Int32)
    /// The passed fd is not a listening `AF_UNIX` `SOCK_STREAM` socket.
    case notUnixStreamListener(Int32)
    /// A libsystemd call failed.
    case system(call: String, errno: Int32)

    /// The errno to report to systemd (`ERRNO=`).
    public var errno: Int32 {
        switch self {
        case .tooManySockets: EINVAL
        case .notUnixStreamListener: ENOTSOCK
        case .system(_, let code): code
        }
    }

    public var description: String {
        switch self {
        case .tooManySockets(let count):
            "systemd passed \(count) sockets (LISTEN_FDS=\(count)); orchd listens on exactly one: give orchd.socket a single ListenStream="
        case .notUnixStreamListener(let fd):
            "the socket systemd passed (fd \(fd)) is not a listening Unix stream socket; orchd.socket needs ListenStream=/path"
        case .system(let call, let code):
            "\(call): \(String(cString: strerror(code)))"
        }
    }
}
