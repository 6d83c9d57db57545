#if canImport(Glibc)
import Glibc
#endif

/// The default locations both `orchd` and `orchctl` resolve, so that `orchd &` followed by
/// `orchctl status` just works.
public enum OrchdPaths {
    /// The state directory (database, lock file, job logs).
    ///
    /// Order: `explicit` (`--state-dir`) > `$ORCHD_STATE_DIR` > `$STATE_DIRECTORY` (set by
    /// systemd's `StateDirectory=`, see systemd.exec(5); the first entry when several) > root:
    /// `/var/lib/orchd`; others: `${XDG_STATE_HOME:-$HOME/.local/state}/orchd`.
    /// - Parameters:
    ///   - explicit: the command-line value, if any.
    ///   - environment: the process environment.
    ///   - uid: the effective uid.
    public static func stateDirectory(explicit: String?, environment: [String: String], uid: UInt32) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let value = environment["ORCHD_STATE_DIR"], !value.isEmpty { return value }
        if let value = environment["STATE_DIRECTORY"], !value.isEmpty {
            return String(value.split(separator: ":").first ?? Substring(value))
        }
        if uid == 0 { return "/var/lib/orchd" }
        if let value = environment["XDG_STATE_HOME"], value.hasPrefix("/") { return value + "/orchd" }
        return home(environment: environment, uid: uid) + "/.local/state/orchd"
    }

    /// The control socket.
    ///
    /// Order: `explicit` (`--socket`) > `$ORCHD_SOCKET` > `$RUNTIME_DIRECTORY/orchd.sock`
    /// (systemd's `RuntimeDirectory=`) > root: `/run/orchd/orchd.sock`; others:
    /// `$XDG_RUNTIME_DIR/orchd/orchd.sock`, else `/tmp/orchd-$UID/orchd.sock`.
    public static func socket(explicit: String?, environment: [String: String], uid: UInt32) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let value = environment["ORCHD_SOCKET"], !value.isEmpty { return value }
        if let value = environment["RUNTIME_DIRECTORY"], !value.isEmpty {
            return String(value.split(separator: ":").first ?? Substring(value)) + "/orchd.sock"
        }
        if uid == 0 { return systemSocket }
        if let value = environment["XDG_RUNTIME_DIR"], value.hasPrefix("/") { return value + "/orchd/orchd.sock" }
        return "/tmp/orchd-\(uid)/orchd.sock"
    }

    /// The system service's control socket (``socket(explicit:environment:uid:)`` for root).
    public static let systemSocket = "/run/orchd/orchd.sock"

    /// The control socket a client connects to: ``socket(explicit:environment:uid:)``, except
    /// that a user with no orchd of their own (nothing at their per-user socket, and no
    /// `--socket`, `$ORCHD_SOCKET` or `$RUNTIME_DIRECTORY`) is pointed at the system service
    /// when it is there, as at(1) users reach atd: on a shared machine, `orchctl submit` just
    /// works for every user.
    /// - Parameters:
    ///   - explicit, environment, uid: as ``socket(explicit:environment:uid:)``.
    ///   - exists: whether a path exists (lstat(2) by default; injectable for tests).
    public static func clientSocket(
        explicit: String?, environment: [String: String], uid: UInt32,
        exists: (String) -> Bool = { path in var status = stat(); return lstat(path, &status) == 0 }
    ) -> String {
        let own = socket(explicit: explicit, environment: environment, uid: uid)
        guard uid != 0, !isNamed(explicit: explicit, environment: environment), !exists(own), exists(systemSocket)
        else { return own }
        return systemSocket
    }

    /// Whether the caller named the socket (`--socket`, `$ORCHD_SOCKET` or
    /// `$RUNTIME_DIRECTORY`) rather than taking a default path.
    public static func isNamed(explicit: String?, environment: [String: String]) -> Bool {
        !(explicit ?? "").isEmpty || !(environment["ORCHD_SOCKET"] ?? "").isEmpty
            || !(environment["RUNTIME_DIRECTORY"] ?? "").isEmpty
    }

    /// Why a socket at `path` could have been put there by another user than `uid` (or root),
    /// or `nil` when it could not: its directory (not a symbolic link) belongs to `uid` or
    /// root and no other user may write in it, unless it is sticky (`/tmp` itself, where
    /// others cannot rename or remove a file they do not own); and the socket file, when
    /// there is one, belongs to `uid` or root. A directory that is missing gives `nil`: a
    /// daemon creates it, and a client's connect then fails by itself.
    ///
    /// A client without `XDG_RUNTIME_DIR` looks for its orchd under `/tmp`, where any user may
    /// create `/tmp/orchd-UID` first and listen there: what the client then sends (its
    /// command lines and whole environment) would go to that user.
    /// - Parameters:
    ///   - path: the socket's path.
    ///   - uid: whose socket it should be.
    /// - Returns: a reason to refuse it ("its directory /tmp/orchd-1000 belongs to uid 1001").
    public static func untrustedSocketReason(_ path: String, uid: UInt32) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        var info = stat()
        guard lstat(directory, &info) == 0 else { return nil }
        if info.st_mode & S_IFMT != S_IFDIR { return "\(directory) is not a directory (a symbolic link?)" }
        if info.st_uid != uid && info.st_uid != 0 { return "its directory \(directory) belongs to uid \(info.st_uid)" }
        if info.st_mode & 0o022 != 0 && info.st_mode & S_ISVTX == 0 {
            return "its directory \(directory) may be written by other users (mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        var file = stat()
        if lstat(path, &file) == 0, file.st_uid != uid && file.st_uid != 0 { return "it belongs to uid \(file.st_uid)" }
        return nil
    }

    private static func home(environment: [String: String], uid: UInt32) -> String {
        if let value = environment["HOME"], value.hasPrefix("/") { return value }
        if let entry = getpwuid(uid), let directory = entry.pointee.pw_dir {
            return String(cString: directory)
        }
        return "/tmp"
    }
}
