import Foundation
import Glibc

/// The fixed test users of the multi-user end-to-end tests, created once per machine with
/// useradd(8) and reused by every test and every run:
/// - `orchd-test-a`, also in the group `orchd-test-extra` (a supplementary group to see),
/// - `orchd-test-b`,
/// - `orchd-test-admin`, in the group `orchd-test-admins`, which the tests' daemons name
///   as their `admin-group`;
/// - `orchd-test-stopper`, for one test only (``stopper()``).
///
/// Creating them needs root; CI runs as root. Creation is idempotent (an existing user or
/// group is kept) and serialised across test processes by an flock(2) on a file in /tmp,
/// and across the tests of one process by the lazy static.
struct TestUser: Sendable {
    let name: String
    let uid: UInt32
    let gid: UInt32
    let home: String

    static let adminGroup = "orchd-test-admins"
    static let extraGroup = "orchd-test-extra"

    /// The three users, created if missing; or why they cannot be.
    static let all: Result<(a: TestUser, b: TestUser, admin: TestUser), TestFailure> = {
        guard geteuid() == 0 else {
            return .failure(TestFailure(
                "the multi-user tests need root: they create the users orchd-test-a, orchd-test-b and orchd-test-admin "
                    + "with useradd and run orchd as root (CI runs the tests as root)"))
        }
        return creatingUsers {
            try ensureGroup(adminGroup)
            try ensureGroup(extraGroup)
            let a = try ensureUser("orchd-test-a", groups: [extraGroup])
            let b = try ensureUser("orchd-test-b", groups: [])
            let admin = try ensureUser("orchd-test-admin", groups: [adminGroup])
            return (a, b, admin)
        }
    }()

    /// Runs `body`, which creates users or groups, holding the lock that serialises that across
    /// test processes.
    /// - Returns: what `body` returns, or why it or the lock failed.
    private static func creatingUsers<T>(_ body: () throws -> T) -> Result<T, TestFailure> {
        let lockFD = open("/tmp/orchd-test-users.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { return .failure(TestFailure("cannot open /tmp/orchd-test-users.lock: errno \(errno)")) }
        defer { close(lockFD) }
        flock(lockFD, LOCK_EX)
        defer { flock(lockFD, LOCK_UN) }
        do {
            return .success(try body())
        } catch let failure as TestFailure {
            return .failure(failure)
        } catch {
            return .failure(TestFailure("\(error)"))
        }
    }

    /// The users, or a thrown failure saying why there are none.
    static func users() throws -> (a: TestUser, b: TestUser, admin: TestUser) {
        try all.get()
    }

    /// `orchd-test-stopper`, for the one test that stops every process of its user
    /// (`kill -STOP -1`): no other test runs anything as this user.
    static func stopper() throws -> TestUser {
        try stopperUser.get()
    }

    private static let stopperUser: Result<TestUser, TestFailure> = {
        if case .failure(let failure) = all { return .failure(failure) }
        return creatingUsers { try ensureUser("orchd-test-stopper", groups: []) }
    }()

    private static func ensureGroup(_ name: String) throws {
        if getgrnam(name) != nil { return }
        try run("/usr/sbin/groupadd", ["-f", name])
    }

    private static func ensureUser(_ name: String, groups: [String]) throws -> TestUser {
        if getpwnam(name) == nil {
            var arguments = ["-m", "-s", "/bin/sh", "-U"]
            if !groups.isEmpty { arguments += ["-G", groups.joined(separator: ",")] }
            try run("/usr/sbin/useradd", arguments + [name])
        } else if !groups.isEmpty {
            try run("/usr/sbin/usermod", ["-a", "-G", groups.joined(separator: ","), name])
        }
        guard let entry = getpwnam(name) else { throw TestFailure("useradd \(name) left no passwd entry") }
        return TestUser(
            name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid, home: String(cString: entry.pointee.pw_dir))
    }

    private static func run(_ program: String, _ arguments: [String]) throws {
        let result = try TestDaemon.run(program, arguments)
        // useradd exits 9 when the user exists: another process made it between our look and our call.
        guard result.status == 0 || result.status == 9 else {
            throw TestFailure("\(program) \(arguments.joined(separator: " ")) failed: \(result)")
        }
    }

    /// The user's groups as the group database lists them (`id -G NAME`), sorted.
    func groupIDs() throws -> [UInt32] {
        let result = try TestDaemon.run("/usr/bin/id", ["-G", name])
        return result.line.split(separator: " ").compactMap { UInt32($0) }.sorted()
    }

    /// Runs a program as this user, with their groups (setpriv(1) from util-linux), in /tmp.
    func run(_ program: String, _ arguments: [String], input: String? = nil) throws -> CommandResult {
        try TestDaemon.run(
            "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--", program] + arguments,
            input: input, workingDirectory: "/tmp")
    }
}
