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
        let chosen = (explicit ?? "").isEmpty && (environment["ORCHD_SOCKET"] ?? "").isEmpty
            && (environment["RUNTIME_DIRECTORY"] ?? "").isEmpty
        guard uid != 0, chosen, !exists(own), exists(systemSocket) else { return own }
        return systemSocket
    }

    private static func home(environment: [String: String], uid: UInt32) -> String {
        if let value = environment["HOME"], value.hasPrefix("/") { return value }
        if let entry = getpwuid(uid), let directory = entry.pointee.pw_dir {
            return String(cString: directory)
        }
        return "/tmp"
    }
}
