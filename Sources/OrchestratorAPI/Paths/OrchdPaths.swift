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
        if uid == 0 { return "/run/orchd/orchd.sock" }
        if let value = environment["XDG_RUNTIME_DIR"], value.hasPrefix("/") { return value + "/orchd/orchd.sock" }
        return "/tmp/orchd-\(uid)/orchd.sock"
    }

    private static func home(environment: [String: String], uid: UInt32) -> String {
        if let value = environment["HOME"], value.hasPrefix("/") { return value }
        if let entry = getpwuid(uid), let directory = entry.pointee.pw_dir {
            return String(cString: directory)
        }
        return "/tmp"
    }
}
