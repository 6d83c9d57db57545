import CPosix
import Glibc

/// Who is on the other end of a Unix socket connection, as the kernel vouches for it
/// (`SO_PEERCRED`, unix(7)).
public struct PeerCredentials: Hashable, Sendable {
    /// The daemon's process ID.
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    /// Reads the peer's credentials of a connected Unix socket.
    /// - Returns: `nil` when the kernel cannot tell (not a Unix socket).
    public static func of(socket fd: Int32) -> PeerCredentials? {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard cposix_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }
}
