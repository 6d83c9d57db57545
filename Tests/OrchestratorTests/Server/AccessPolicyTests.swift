import CommandLineParsing
import Foundation
import Testing

@testable import Orchestrator

@Suite("Access policy")
struct AccessPolicyTests {
    @Test("allow-users, admin-group and max-running-per-user are read from the configuration file")
    func settingsParse() throws {
        let settings = DaemonConfiguration().applying(file: try ConfigurationFile.parse(
            "allow-users = alice, bob @staff\nadmin-group = wheel\nmax-running-per-user = 2\n", path: "f"))
        #expect(settings.allowedUsers == .only(users: ["alice", "bob"], groups: ["staff"]))
        #expect(settings.adminGroup == "wheel")
        #expect(settings.maxRunningPerUser == 2)
        #expect(DaemonConfiguration().applying(file: try ConfigurationFile.parse("allow-users = all\n", path: "f")).allowedUsers == .all)
        let defaults = DaemonConfiguration().applying(file: try ConfigurationFile.parse("max-running-per-user = 0\n", path: "f"))
        #expect(defaults.allowedUsers == .all && defaults.adminGroup == "orchd" && defaults.maxRunningPerUser == nil)
    }

    @Test("an admin group, user or @group that does not exist is named in a warning; existing ones are not")
    func unknownNames() throws {
        let policy = AccessPolicy(
            daemonUID: 0, allowedUsers: try #require(AllowedUsers("root, orchd-no-such-user @root @orchd-no-such-group")),
            adminGroup: "orchd-no-such-admins")
        #expect(policy.unknownNames == [
            "admin-group: there is no group 'orchd-no-such-admins', so only root is an admin",
            "allow-users: there is no user 'orchd-no-such-user'",
            "allow-users: there is no group '@orchd-no-such-group'",
        ])
        #expect(AccessPolicy(daemonUID: 0, allowedUsers: .all, adminGroup: "root").unknownNames.isEmpty)
    }

    @Test("a bad allow-users, admin-group or max-running-per-user names the line and what is expected", arguments: [
        "allow-users =", "allow-users = ,", "allow-users = @", "allow-users = a@b", "allow-users = a:b",
        "admin-group = two words", "max-running-per-user = -1", "max-running-per-user = 10001", "max-running-per-user = x",
    ])
    func badSettings(_ line: String) {
        #expect(throws: ConfigurationFileError.self) { try ConfigurationFile.parse(line + "\n", path: "f") }
    }

    @Test("--allow-users, --admin-group and --max-running-per-user refuse the same values as the file, with the reason", arguments: [
        ("--allow-users=a@b", "invalid value for option '--allow-users': 'a@b' is not 'all' or user names and @groups separated by commas or spaces"),
        ("--allow-users=", "invalid value for option '--allow-users': '' is not 'all' or user names and @groups separated by commas or spaces"),
        ("--admin-group=two words", "invalid value for option '--admin-group': 'two words' is not a group name (no spaces, commas, colons or slashes)"),
        ("--max-running-per-user=-1", "invalid value for option '--max-running-per-user': '-1' is not a whole number from 0 to 10000"),
    ])
    func badFlags(_ argument: String, message: String) {
        let error = #expect(throws: CommandLineError.self) { try DaemonConfiguration.parse([argument], environment: [:], uid: 0) }
        #expect(error?.message == message)
    }

    @Test("the access flags override the file's keys, at start-up and at every reload")
    func flagsOverrideFile() throws {
        guard case .run(let parsed) = try DaemonConfiguration.parse(
            ["--allow-users", "carol", "--max-running-per-user", "3"], environment: [:], uid: 0)
        else { Issue.record("expected run"); return }
        let file = try ConfigurationFile.parse("allow-users = alice\nadmin-group = wheel\nmax-running-per-user = 1\n", path: "f")
        let applied = parsed.applying(file: file)
        #expect(applied.allowedUsers == .only(users: ["carol"], groups: []))
        #expect(applied.adminGroup == "wheel")
        #expect(applied.maxRunningPerUser == 3)
        // A key taken out of the file returns to its default at the reload.
        let reloaded = applied.applying(file: try ConfigurationFile.parse("", path: "f"))
        #expect(reloaded.adminGroup == "orchd" && reloaded.maxRunningPerUser == 3)
    }

    @Test("a per-user orchd answers only its own user and root; the system service answers everyone")
    func whoMayCall() {
        let perUser = AccessPolicy(daemonUID: 1000)
        #expect(perUser.caller(uid: 1000) == Caller(uid: 1000, isAdmin: true))
        #expect(perUser.caller(uid: 0) == Caller(uid: 0, isAdmin: true))
        #expect(perUser.caller(uid: 1001) == nil)
        let system = AccessPolicy(daemonUID: 0, adminGroup: "orchd-no-such-group-xyz")
        #expect(system.caller(uid: 1001) == Caller(uid: 1001, isAdmin: false))
    }

    @Test("admin methods need an admin; other users may submit unless allow-users leaves them out")
    func methods() {
        let policy = AccessPolicy(daemonUID: 0, allowedUsers: .only(users: ["orchd-no-such-user-xyz"], groups: []))
        let user = Caller(uid: 4_000_000, isAdmin: false)
        for method in AccessPolicy.adminMethods {
            #expect(policy.refusal(of: method, by: user) != nil, "\(method)")
            #expect(policy.refusal(of: method, by: .root) == nil, "\(method)")
        }
        #expect(policy.refusal(of: "io.orchd.Jobs.Submit", by: user) != nil)
        #expect(policy.refusal(of: "io.orchd.Jobs.List", by: user) == nil)
        // The refusal names the command a user typed, then the method.
        #expect(policy.refusal(of: "io.orchd.Queues.Pause", by: user)
            == "'orchctl pause' (io.orchd.Queues.Pause) needs root or membership of the group 'orchd'")
        #expect(AccessPolicy(daemonUID: 0).refusal(of: "io.orchd.Jobs.Submit", by: user) == nil)
    }

    @Test("a caller manages their own jobs; an admin every job")
    func ownership() {
        #expect(Caller(uid: 5, isAdmin: false).mayManage(owner: 5))
        #expect(!Caller(uid: 5, isAdmin: false).mayManage(owner: 6))
        #expect(Caller(uid: 5, isAdmin: true).mayManage(owner: 6))
        #expect(!Caller.nobody.mayManage(owner: 0))
    }
}
