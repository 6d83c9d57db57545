import Foundation
import Glibc
import OrchestratorAPI

/// Who may call orchd, who may submit, and who is an admin: decided per call from the
/// caller's `SO_PEERCRED` uid and the password and group databases.
///
/// - A daemon that is not root (the per-user service) answers only its own user and root.
/// - A root daemon (the system service) answers every local user. Users submit, and act on
///   their own jobs; `allow-users` may restrict who submits. Root, the daemon's user and
///   members of `admin-group` (default `orchd`) are admins: they manage every job, and only
///   they may call the methods in ``adminMethods``.
public struct AccessPolicy: Sendable {
    /// The daemon's effective uid.
    public var daemonUID: UInt32
    /// Who may submit (and retry): every user, or those listed.
    public var allowedUsers: AllowedUsers
    /// Members of this group are admins.
    public var adminGroup: String

    /// Creates a policy.
    public init(daemonUID: UInt32, allowedUsers: AllowedUsers = .all, adminGroup: String = AccessPolicy.defaultAdminGroup) {
        self.daemonUID = daemonUID
        self.allowedUsers = allowedUsers
        self.adminGroup = adminGroup
    }

    /// The admin group when `admin-group` is not set.
    public static let defaultAdminGroup = "orchd"

    /// Methods only admins may call: they change the daemon or every user's jobs, or (login
    /// names) serve only listings of every user's jobs, which no one else gets.
    public static let adminMethods = Set(adminCommands.keys)

    /// The admin-only methods, each with what calls it, for messages: an orchctl command, or
    /// what orchctl does with it (it asks for login names only for an admin's listing).
    static let adminCommands: [String: String] = [
        QueuesInterface.set.name: "'orchctl queue set'", QueuesInterface.add.name: "'orchctl queue add'",
        QueuesInterface.remove.name: "'orchctl queue remove'", QueuesInterface.pause.name: "'orchctl pause'",
        QueuesInterface.resume.name: "'orchctl resume'", JobsInterface.prune.name: "'orchctl prune'",
        ManagerInterface.reload.name: "'orchctl reload'", ManagerInterface.shutdown.name: "'orchctl shutdown'",
        ManagerInterface.getUserNames.name: "looking up users' login names (orchctl's OWNER column for an admin)",
    ]

    /// Methods that start work as the caller, which `allow-users` restricts.
    public static let submitMethods: Set<String> = [
        JobsInterface.submit.name, JobsInterface.submitBatch.name, JobsInterface.retry.name, JobsInterface.retryFailed.name,
    ]

    /// Whether this daemon serves every user (it runs as root) rather than its own user only.
    public var servesEveryUser: Bool { daemonUID == 0 }

    /// The caller a peer is, or `nil` when the peer may not call at all.
    /// - Parameter uid: the peer's uid.
    public func caller(uid: UInt32) -> Caller? {
        if uid == 0 || uid == daemonUID { return Caller(uid: uid, isAdmin: true) }
        guard servesEveryUser else { return nil }
        let isAdmin: Bool
        if let group = UserAccount.groupID(named: adminGroup), let account = UserAccount.lookup(uid: uid) {
            isAdmin = account.groups.contains(group)
        } else {
            isAdmin = false
        }
        return Caller(uid: uid, isAdmin: isAdmin)
    }

    /// Why a peer that ``caller(uid:)`` turns away is refused: a per-user daemon serves its
    /// own user and root alone. Says whose daemon it is and where the caller's own would be.
    public var otherUserRefusal: String {
        let owner = UserAccount.lookup(uid: daemonUID).map { "\($0.name) (uid \(daemonUID))" } ?? "uid \(daemonUID)"
        return "this orchd runs as \(owner) and serves only that user and root; start your own orchd "
            + "('systemctl --user start orchd', or 'orchd'), or use the system service's socket"
    }

    /// What is wrong with the names the settings give, each as a log line: an `admin-group` or
    /// an `allow-users` user or `@group` that the password and group databases do not know (a
    /// typo would otherwise leave the service without admins, or shut users out, silently).
    /// They are not errors: the name may be created later, and counts from then on.
    public var unknownNames: [String] {
        var warnings: [String] = []
        if UserAccount.groupID(named: adminGroup) == nil {
            warnings.append("admin-group: there is no group '\(adminGroup)', so only root is an admin")
        }
        if case .only(let users, let groups) = allowedUsers {
            for user in users.sorted() where UserAccount.lookup(name: user) == nil {
                warnings.append("allow-users: there is no user '\(user)'")
            }
            for group in groups.sorted() where UserAccount.groupID(named: group) == nil {
                warnings.append("allow-users: there is no group '@\(group)'")
            }
        }
        return warnings
    }

    /// Whether `caller` may call `method`.
    /// - Returns: `nil` when allowed, else why not (for the error's message).
    public func refusal(of method: String, by caller: Caller) -> String? {
        if let command = Self.adminCommands[method], !caller.isAdmin {
            return "\(command) (\(method)) needs root or membership of the group '\(adminGroup)'"
        }
        if Self.submitMethods.contains(method) && !caller.isAdmin && !allowedUsers.admits(uid: caller.uid) {
            return "uid \(caller.uid) may not submit jobs here (allow-users)"
        }
        return nil
    }
}

/// The value of `allow-users`: `all`, or a list of user names and `@group` names separated
/// by commas or spaces (`alice, bob @staff`).
public enum AllowedUsers: Hashable, Sendable {
    case all
    case only(users: Set<String>, groups: Set<String>)

    /// Parses the setting.
    /// - Returns: `nil` when the text is empty or a name is empty or has characters no user
    ///   or group name has.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "all" {
            self = .all
            return
        }
        var users: Set<String> = []
        var groups: Set<String> = []
        for item in trimmed.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            let isGroup = item.hasPrefix("@")
            let name = String(isGroup ? item.dropFirst() : item)
            guard !name.isEmpty, !name.contains(where: { $0 == "@" || $0 == ":" || $0 == "/" || $0.isNewline || $0.asciiValue.map { $0 < 0x20 } ?? false })
            else { return nil }
            if isGroup { groups.insert(name) } else { users.insert(name) }
        }
        guard !users.isEmpty || !groups.isEmpty else { return nil }
        self = .only(users: users, groups: groups)
    }

    /// Whether the user with `uid` is admitted, by name or by membership of a listed group.
    public func admits(uid: UInt32) -> Bool {
        switch self {
        case .all: return true
        case .only(let users, let groups):
            guard let account = UserAccount.lookup(uid: uid) else { return false }
            if users.contains(account.name) { return true }
            return groups.contains { name in UserAccount.groupID(named: name).map(account.groups.contains) ?? false }
        }
    }
}
