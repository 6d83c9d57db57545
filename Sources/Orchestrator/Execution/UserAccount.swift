import Glibc

/// A user as the password and group databases describe it at one moment: what a job
/// submitted by that user runs with under the system service (passwd(5), group(5)).
public struct UserAccount: Hashable, Sendable {
    /// The login name.
    public var name: String
    public var uid: UInt32
    /// The primary group, from the passwd entry.
    public var gid: UInt32
    /// Every group the user is in, the primary group included (getgrouplist(3)).
    public var groups: [UInt32]
    /// The home directory and login shell, from the passwd entry.
    public var home: String
    public var shell: String

    /// Looks a user up by uid, with their supplementary groups.
    /// - Parameter uid: the user.
    /// - Returns: the account, or `nil` when the password database has no entry for `uid`
    ///   (or cannot be read).
    public static func lookup(uid: UInt32) -> UserAccount? {
        withEntry(uid: uid) { entry, namePointer in
            let gid = entry.pw_gid
            var count: Int32 = 64
            var groups = [gid_t](repeating: 0, count: Int(count))
            // getgrouplist(3) says how many it needs when the buffer is too small.
            while getgrouplist(namePointer, gid, &groups, &count) < 0 {
                guard count > Int32(groups.count) else { return nil }
                groups = [gid_t](repeating: 0, count: Int(count))
            }
            return UserAccount(
                name: String(cString: namePointer), uid: uid, gid: gid, groups: Array(groups.prefix(Int(count))),
                home: entry.pw_dir.map { String(cString: $0) } ?? "/",
                shell: entry.pw_shell.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/bin/sh")
        }
    }

    /// A user's login name, without the group lookups of ``lookup(uid:)``.
    /// - Parameter uid: the user.
    /// - Returns: the name, or `nil` when the password database has no entry for `uid` (or
    ///   cannot be read).
    public static func name(uid: UInt32) -> String? {
        withEntry(uid: uid) { _, name in String(cString: name) }
    }

    /// Runs `body` with the password database's entry for `uid` and its login name
    /// (getpwuid_r(3)), whose strings point into a buffer that lives as long as the call.
    /// - Returns: what `body` returns; `nil` when there is no entry (or it cannot be read).
    private static func withEntry<T>(uid: UInt32, _ body: (passwd, UnsafePointer<CChar>) -> T?) -> T? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        return buffer.withUnsafeMutableBufferPointer { bytes in
            guard let base = bytes.baseAddress, getpwuid_r(uid, &entry, base, bytes.count, &result) == 0, result != nil,
                  let name = entry.pw_name else { return nil }
            return body(entry, name)
        }
    }

    /// Looks a user up by name.
    /// - Returns: the account, or `nil` when there is no such user.
    public static func lookup(name: String) -> UserAccount? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return lookup(uid: entry.pw_uid)
    }

    /// The gid of a group, by name; `nil` when there is no such group.
    public static func groupID(named name: String) -> UInt32? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
