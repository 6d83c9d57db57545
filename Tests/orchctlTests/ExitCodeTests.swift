import Glibc
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("Exit codes")
struct ExitCodeTests {
    func failure(_ error: VarlinkClientError, afterReply: Bool = false, uid: UInt32 = 1000) -> CommandFailure {
        CommandFailure(error, socket: "/run/orchd/orchd.sock", afterReply: afterReply, uid: uid, plainOrchdSocket: "/run/orchd/orchd.sock")
    }

    func hint(uid: UInt32 = 0, socket: String = "/run/orchd/orchd.sock", systemdBooted: Bool) -> String {
        CommandFailure.startHint(uid: uid, socket: socket, plainOrchdSocket: uid == 0 ? "/run/orchd/orchd.sock" : "/run/user/\(uid)/orchd/orchd.sock", systemdBooted: systemdBooted)
    }

    @Test("an absent or refusing daemon exits 69 with a hint to start it", arguments: [ENOENT, ECONNREFUSED, ENOTDIR])
    func unreachable(code: Int32) {
        let result = failure(.connectFailed(path: "/run/orchd/orchd.sock", errno: code), uid: 0)
        #expect(result.exitCode == .unavailable)
        #expect(result.message.hasPrefix("cannot reach orchd at /run/orchd/orchd.sock ("))
        #expect(result.message.hasSuffix("Is it running? \(hint(systemdBooted: CommandFailure.systemdBooted))"))
    }

    @Test("where systemd is the init system, root is pointed at the system service and others at the user service")
    func systemdHint() {
        #expect(hint(systemdBooted: true) == "Start it with 'systemctl start orchd' or run 'orchd' in another terminal.")
        #expect(hint(uid: 1000, socket: "/run/user/1000/orchd/orchd.sock", systemdBooted: true).contains("'systemctl --user start orchd'"))
    }

    @Test("without systemd as the init system, the hint does not mention systemctl")
    func noSystemdHint() {
        for uid: UInt32 in [0, 1000] {
            let socket = uid == 0 ? "/run/orchd/orchd.sock" : "/run/user/1000/orchd/orchd.sock"
            let text = hint(uid: uid, socket: socket, systemdBooted: false)
            #expect(!text.contains("systemctl"))
            // Root also gets the background start the install script makes without systemd.
            #expect(text == (uid == 0
                ? "Start it by running 'orchd' in another terminal, or in the background: setsid -f orchd </dev/null >>/var/log/orchd.log 2>&1"
                : "Start it by running 'orchd' in another terminal."))
        }
    }

    @Test("a socket that a plain orchd would not serve gets a hint to start one with --socket, quoted for the shell")
    func otherSocketHint() {
        for booted in [true, false] {
            #expect(hint(socket: "/tmp/mine/orchd.sock", systemdBooted: booted) == "Start one that serves it in another terminal: orchd --socket /tmp/mine/orchd.sock (with --state-dir DIR of its own when another orchd uses the default state directory)")
            #expect(hint(uid: 1000, socket: "/tmp/my jobs/o.sock", systemdBooted: booted) == "Start one that serves it in another terminal: orchd --socket '/tmp/my jobs/o.sock' (with --state-dir DIR of its own when another orchd uses the default state directory)")
        }
    }

    @Test("a user pointed at the system service's socket is told an administrator starts it, or to run their own")
    func systemSocketHintForUsers() {
        #expect(hint(uid: 1000, systemdBooted: true) == "It is the system service's socket: an administrator starts it with 'systemctl start orchd'; or run your own with 'orchd' in another terminal.")
        #expect(!hint(uid: 1000, systemdBooted: false).contains("systemctl"))
    }

    @Test("permission denied exits 77", arguments: [EACCES, EPERM])
    func permissionDenied(code: Int32) {
        #expect(failure(.connectFailed(path: "/x", errno: code)).exitCode == .permissionDenied)
    }

    @Test("a connection closed before the request was answered exits 69, before any reply on it or after one (never 1, a failed job's status)")
    func connectionLost() {
        #expect(failure(.connectionLost(errno: 0)).exitCode == .unavailable)
        #expect(failure(.connectionLost(errno: ECONNRESET), afterReply: true).exitCode == .unavailable)
    }

    @Test("a connection reset before a call's first reply (orchd closed it with the call unread) means the call was not received, so a submit may be sent again; one closed after reading it may have been done")
    func resetBeforeReply() throws {
        for (closesUnread, delivered) in [(true, false), (false, true)] {
            let orchd = try FakeOrchd(replies: [], closesUnread: closesUnread)
            let client = try VarlinkClient(socketPath: orchd.socketPath)
            let error = #expect(throws: VarlinkClientError.self) { try client.call(ManagerInterface.ping, VarlinkNoParameters()) }
            _ = orchd.receivedCalls()
            switch error {
            case .callNotDelivered(let code)?:
                #expect(!delivered && code == ECONNRESET, "\(String(describing: error))")
            case .connectionLost(let code)?:
                #expect(delivered && code == 0, "\(String(describing: error))")
            default:
                Issue.record("\(String(describing: error))")
            }
            let thrown = try #require(error)
            #expect(failure(thrown, afterReply: true).wasNotDelivered == !delivered)
        }
    }

    @Test("daemon errors map to 1, 77 or 69 by name")
    func remoteErrors() {
        let missing = failure(.remote(JobsInterface.noSuchJob(JobID(rawValue: 7))))
        #expect(missing.exitCode == .failure)
        #expect(missing.message == "no job with ID 7")
        #expect(missing.remoteErrorName == "io.orchd.Jobs.NoSuchJob")
        #expect(failure(.remote(JobsInterface.permissionDenied(JobID(rawValue: 7)))).exitCode == .permissionDenied)
        #expect(failure(.remote(.permissionDenied())).exitCode == .permissionDenied)
        #expect(failure(.remote(JobsInterface.alreadyFinished(JobID(rawValue: 7)))).exitCode == .failure)
        #expect(failure(.protocolViolation("garbage")).exitCode == .failure)
    }

    @Test("one job's result gives its shell exit status")
    func singleJobStatus() {
        let job = { (result: JobResult) in [makeJob(1, .argv(["x"]), state: .finished(result))] }
        #expect(WaitCommand.exitCode(for: job(.succeeded)) == .success)
        #expect(WaitCommand.exitCode(for: job(.failed(exitCode: 3))) == ExitCode(3))
        #expect(WaitCommand.exitCode(for: job(.signaled(signal: 9))) == ExitCode(137))
        #expect(WaitCommand.exitCode(for: job(.timedOut)) == ExitCode(124))
        #expect(WaitCommand.exitCode(for: job(.cancelled)) == .failure)
    }

    @Test("several jobs give 0 when all succeeded, else 1")
    func severalJobsStatus() {
        let ok = makeJob(1, .argv(["true"]), state: .finished(.succeeded))
        let bad = makeJob(2, .argv(["false"]), state: .finished(.failed(exitCode: 7)))
        #expect(WaitCommand.exitCode(for: [ok, ok]) == .success)
        #expect(WaitCommand.exitCode(for: [ok, bad]) == .failure)
    }
}
