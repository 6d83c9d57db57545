import Glibc
import OrchestratorAPI

/// Binds the daemon's listening Unix socket, replacing a stale socket file a crashed daemon
/// left behind but never stealing a live one (docs/ARCHITECTURE.md, Durability).
public enum ControlSocket {
    /// Creates, binds and listens on a Unix stream socket at `path`.
    ///
    /// For a daemon of one user, the parent directory is created 0700 when missing and the
    /// socket file 0600, so no other user can connect even for an instant. For the system
    /// service (`everyUser`), which answers every local user and authorises each call from
    /// `SO_PEERCRED`, they are 0755 and 0666. Either way the socket has its mode from the
    /// moment it exists (umask around `bind`), never a wider one first. An existing
    /// file at `path` is probed with `connect`: refused means stale and it is removed; accepted
    /// means another daemon serves it and binding fails.
    /// - Parameters:
    ///   - path: the socket path (at most 107 bytes, unix(7)).
    ///   - everyUser: whether every local user may connect (the system service).
    /// - Returns: the listening fd, close-on-exec.
    /// - Throws: ``ControlSocketError``.
    public static func bind(path: String, everyUser: Bool = false) throws(ControlSocketError) -> Int32 {
        guard var address = socketAddress(path) else { throw .pathTooLong(path) }
        try createParentDirectory(of: path, mode: everyUser ? 0o755 : 0o700)
        // A directory another user made or may write in (`/tmp/orchd-UID` made first by
        // someone else) lets them replace the socket and take this daemon's clients.
        if let reason = OrchdPaths.untrustedSocketReason(path, uid: geteuid()) { throw .unsafeDirectory(path, reason) }

        if access(path, F_OK) == 0 {
            if isServed(&address) { throw .inUse(path) }
            // Refused: no one listens. Remove only a socket, never some other file.
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { throw .notASocket(path) }
            unlink(path)
        }

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: path, errno: errno) }
        let previousMask = umask(everyUser ? 0o111 : 0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let bindErrno = errno
        umask(previousMask)
        guard bound == 0 else {
            close(fd)
            throw .system(call: "bind", path: path, errno: bindErrno)
        }
        guard listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw .system(call: "listen", path: path, errno: code)
        }
        return fd
    }

    /// Builds `sockaddr_un` for `path`; `nil` when it does not fit `sun_path`.
    static func socketAddress(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    private static func isServed(_ address: inout sockaddr_un) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    /// Creates the missing directories of `path`'s parent with `mode` exactly (not narrowed
    /// by the umask); existing ones are left as they are.
    private static func createParentDirectory(of path: String, mode: mode_t) throws(ControlSocketError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        do {
            try DirectoryPath.create(String(path[..<slash])) { _ in mode }
        } catch {
            throw .system(call: "mkdir", path: error.path, errno: error.errno)
        }
    }
}

/// Why the control socket could not be set up.
public enum ControlSocketError: Error, Sendable, CustomStringConvertible {
    /// Another process accepts connections on this socket: most likely a second orchd.
    case inUse(String)
    /// Something other than a socket is in the way.
    case notASocket(String)
    /// The path does not fit `sun_path` (107 bytes, unix(7)).
    case pathTooLong(String)
    /// Another user could replace the socket: why (``OrchdPaths/untrustedSocketReason(_:uid:)``).
    case unsafeDirectory(String, String)
    /// A system call failed.
    case system(call: String, path: String, errno: Int32)

    /// The errno to report to systemd (`ERRNO=`), when there is one.
    public var errno: Int32 {
        switch self {
        case .inUse: EADDRINUSE
        case .notASocket: ENOTSOCK
        case .pathTooLong: ENAMETOOLONG
        case .unsafeDirectory: EPERM
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
        case .unsafeDirectory(let path, let reason):
            "will not listen on \(path): \(reason), so another user could replace the socket; remove that directory, or pass a --socket in a directory of your own"
        case .system(let call, let path, let code):
            "\(call) \(path): \(String(cString: strerror(code)))"
        }
    }
}
