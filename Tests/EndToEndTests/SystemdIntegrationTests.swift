import CPosix
import Foundation
import Glibc
import Testing
import TestWaitLimits

/// orchd under systemd's protocols: the watchdog, reload on SIGHUP, socket activation and
/// start-up failures reported with `ERRNO=`. The notify listener plays systemd.
@Suite("systemd integration end to end")
struct SystemdIntegrationTests {
    // MARK: - Watchdog

    @Test("with WATCHDOG_USEC=2s, WATCHDOG=1 arrives about every second; a blocked control queue stops it")
    func watchdogPingsOnlyWhileControlQueueAnswers() throws {
        let daemon = try TestDaemon(
            arguments: ["--test-block-control-queue-on-sigusr1"], environment: ["WATCHDOG_USEC": "2000000"])
        // Three pings (about one a second) well within 5 s; the timing is not asserted tightly.
        let start = Date()
        for ping in 1...3 {
            let remaining = 5 - Date().timeIntervalSince(start)
            #expect(daemon.notify.waitFor("WATCHDOG=1", timeout: max(0.1, remaining)) != nil, "ping \(ping)\n\(daemon.daemonLog)")
        }

        try daemon.send(SIGUSR1)
        // The daemon says when it first withholds a ping; from then on, none may arrive.
        let untilStuck = try #require(daemon.notify.waitFor("STATUS=the scheduler is not responding; watchdog pings withheld", timeout: 10))
        #expect(untilStuck.filter { $0.split(separator: "\n").contains("WATCHDOG=1") }.count <= 1, "at most the ping already in flight")
        let after = daemon.notify.messages(during: 3)
        #expect(!after.contains { $0.split(separator: "\n").contains("WATCHDOG=1") }, "\(after)")
        #expect(daemon.daemonLog.contains("withholding watchdog pings"))
    }

    @Test("a service manager that stops reading the notification socket does not keep orchd from stopping")
    func stopsWhenNotificationsAreNotRead() throws {
        // Pings every 50 ms fill the socket's queue (net.unix.max_dgram_qlen datagrams, and at
        // most its receive buffer) soon; the test waits until a sender is blocked.
        let daemon = try TestDaemon(environment: ["WATCHDOG_USEC": "100000"])
        let process = try #require(daemon.process)
        daemon.notify.stopReading()
        // No event says a thread blocked; /proc is looked at every 20 ms.
        let blockedBy = Date().addingTimeInterval(30)
        while !Self.hasThreadBlockedInSendmsg(process.processIdentifier), Date() < blockedBy { usleep(20_000) }
        #expect(Self.hasThreadBlockedInSendmsg(process.processIdentifier), "orchd's notifier never blocked on the full socket")

        // Its exit is an event: the pidfd becomes readable.
        let pidfd = cposix_pidfd_open(process.processIdentifier)
        try #require(pidfd >= 0)
        defer { close(pidfd) }
        kill(process.processIdentifier, SIGTERM)
        var exit = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        let exited = poll(&exit, 1, 30_000) == 1
        if !exited { kill(process.processIdentifier, SIGKILL) }
        #expect(exited, "orchd still running 30 s after SIGTERM\n\(daemon.daemonLog)")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(daemon.daemonLog.contains("did not read its notification socket"), "\(daemon.daemonLog)")
    }

    @Test("without WATCHDOG_USEC no WATCHDOG=1 is sent")
    func noWatchdogWhenNotAsked() throws {
        let daemon = try TestDaemon()
        try daemon.send(SIGHUP)  // some traffic to wait on instead of a sleep
        let messages = try #require(daemon.notify.waitFor("READY=1", timeout: 10))
        #expect(!messages.contains { $0.contains("WATCHDOG=1") }, "\(messages)")
    }

    // MARK: - Reload

    @Test("SIGHUP sends RELOADING=1 with MONOTONIC_USEC= in one message, then READY=1")
    func reloadNotifications() throws {
        let daemon = try TestDaemon()
        try daemon.send(SIGHUP)
        let untilReloading = try #require(daemon.notify.waitFor("RELOADING=1", timeout: 10))
        let lines = try #require(untilReloading.last).split(separator: "\n")
        let monotonic = try #require(lines.first { $0.hasPrefix("MONOTONIC_USEC=") })
        let microseconds = try #require(Int64(monotonic.dropFirst("MONOTONIC_USEC=".count)))
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        #expect(microseconds > 0 && microseconds <= Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000)
        let untilReady = try #require(daemon.notify.waitFor("READY=1", timeout: 10))
        #expect(try #require(untilReady.last).contains("STATUS="))
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("a reload applies a changed concurrency; orchctl info shows the live value")
    func reloadChangesConcurrency() throws {
        let daemon = try TestDaemon(concurrency: nil, configuration: "# test\nconcurrency = 1\n")
        #expect(try concurrency(of: daemon) == 1)
        try daemon.writeConfiguration("concurrency = 3   # more\nkill-grace = 1s\nlog-level = debug\n")
        try daemon.send(SIGHUP)
        #expect(daemon.notify.waitFor("READY=1", timeout: 10) != nil)
        #expect(try concurrency(of: daemon) == 3, "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("reloaded"))
    }

    @Test("orchctl reload does what SIGHUP does and reports a broken file")
    func reloadThroughVarlink() throws {
        let daemon = try TestDaemon(concurrency: nil, configuration: "concurrency = 1\n")
        try daemon.writeConfiguration("concurrency = 2\n")
        let reloaded = try daemon.orchctl(["reload"])
        #expect(reloaded.status == 0 && reloaded.line == "reloaded (default concurrency 2; a queue the file names takes the file's settings, the others keep theirs)", "\(reloaded)")
        #expect(daemon.notify.waitFor("READY=1", timeout: 10) != nil)
        try daemon.writeConfiguration("concurrency = many\n")
        let broken = try daemon.orchctl(["reload"])
        #expect(broken.status == 1)
        #expect(broken.standardError.contains("line 1"), "\(broken)")
        #expect(try concurrency(of: daemon) == 2)
    }

    @Test("command-line flags override the configuration file, also after a reload")
    func flagsOverrideFile() throws {
        let daemon = try TestDaemon(concurrency: 2, configuration: "concurrency = 5\n")
        #expect(try concurrency(of: daemon) == 2)
        try daemon.send(SIGHUP)
        #expect(daemon.notify.waitFor("READY=1", timeout: 10) != nil)
        #expect(try concurrency(of: daemon) == 2)
    }

    @Test("a broken configuration file at reload is logged with its line, the old settings stay, and READY=1 still comes")
    func brokenReloadKeepsRunning() throws {
        let daemon = try TestDaemon(concurrency: nil, configuration: "concurrency = 1\n")
        try daemon.writeConfiguration("concurrency = 4\n\nconcurrency = lots\n")
        try daemon.send(SIGHUP)
        let messages = try #require(daemon.notify.waitFor("READY=1", timeout: 10))
        #expect(messages.contains { $0.contains("RELOADING=1") })
        #expect(daemon.daemonLog.contains("line 3"), "\(daemon.daemonLog)")
        #expect(try concurrency(of: daemon) == 1)
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0)
        #expect(try #require(daemon.process).isRunning)
    }

    // MARK: - Start-up failures

    @Test("a missing --config file: exit 1 with a message, and ERRNO= reaches systemd")
    func missingConfigurationFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notify = try NotifyListener(path: directory + "/notify.sock")
        let result = try TestDaemon.run(
            Binaries.orchd,
            ["--state-dir", directory + "/state", "--socket", directory + "/orchd.sock", "--config", directory + "/missing.conf"],
            environment: environment(notify: notify))
        #expect(result.status == 1)
        #expect(result.standardError.contains(directory + "/missing.conf"), "\(result)")
        #expect(notify.waitFor("ERRNO=\(ENOENT)", timeout: 5) != nil)
    }

    @Test("a broken configuration file at start-up: exit 1 naming the line")
    func brokenConfigurationFileAtStart() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "concurrency = 2\nwhat\n".write(toFile: directory + "/orchd.conf", atomically: true, encoding: .utf8)
        let notify = try NotifyListener(path: directory + "/notify.sock")
        let result = try TestDaemon.run(
            Binaries.orchd,
            ["--state-dir", directory + "/state", "--socket", directory + "/orchd.sock", "--config", directory + "/orchd.conf"],
            environment: environment(notify: notify))
        #expect(result.status == 1)
        #expect(result.standardError.contains("line 2"), "\(result)")
        #expect(notify.waitFor("ERRNO=\(EINVAL)", timeout: 5) != nil)
    }

    // MARK: - Socket activation

    @Test("started by systemd-socket-activate, orchd serves the passed socket and leaves its file to systemd")
    func socketActivation() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notify = try NotifyListener(path: directory + "/notify.sock")
        let socket = directory + "/activated.sock"
        let activator = try SocketActivator(
            sockets: [socket],
            command: [Binaries.orchd, "--state-dir", directory + "/state", "--config", "/dev/null"],
            environment: environment(notify: notify))

        // systemd-socket-activate execs orchd at the first connection.
        let ping = try TestDaemon.run(Binaries.orchctl, ["--socket", socket, "ping"])
        #expect(ping.status == 0, "\(ping)\n\(activator.standardError)")
        #expect(notify.waitFor("READY=1", timeout: 10) != nil)
        let info = try TestDaemon.run(Binaries.orchctl, ["--socket", socket, "info", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        #expect(object?["socket"] as? String == socket, "\(info)")

        #expect(activator.stop() == 0)
        #expect(access(socket, F_OK) == 0, "the socket file belongs to whoever passed it")
    }

    @Test("two passed sockets are a clear start-up error with ERRNO=")
    func twoActivatedSockets() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notify = try NotifyListener(path: directory + "/notify.sock")
        let activator = try SocketActivator(
            sockets: [directory + "/a.sock", directory + "/b.sock"],
            command: [Binaries.orchd, "--state-dir", directory + "/state", "--config", "/dev/null"],
            environment: environment(notify: notify))
        _ = try RawSocket(path: directory + "/a.sock")
        #expect(notify.waitFor("ERRNO=\(EINVAL)", timeout: 10) != nil)
        #expect(activator.wait() == 1)
        #expect(activator.standardError.contains("exactly one"), "\(activator.standardError)")
    }

    // MARK: - Helpers

    /// Whether a thread of `pid` is inside sendmsg(2), from `/proc/PID/task/TID/syscall`
    /// (its first field is the number of the system call a blocked thread is in; proc(5)).
    private static func hasThreadBlockedInSendmsg(_ pid: Int32) -> Bool {
        #if arch(x86_64)
        let sendmsgNumber = "46"  // asm/unistd_64.h
        #elseif arch(arm64)
        let sendmsgNumber = "211"  // asm-generic/unistd.h
        #endif
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let line = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)) ?? ""
            return line.split(separator: " ").first == Substring(sendmsgNumber)
        }
    }

    private func concurrency(of daemon: TestDaemon) throws -> Int? {
        let info = try daemon.orchctl(["info", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        return object?["concurrency"] as? Int
    }

    private func temporaryDirectory() throws -> String {
        var template = Array("/tmp/orchd-e2e-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        return String(cString: created)
    }

    private func environment(notify: NotifyListener) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        return environment
    }
}

/// `systemd-socket-activate -l SOCKET... COMMAND...`: listens like a socket unit and execs the
/// command with `$LISTEN_FDS` at the first connection.
///
/// Spawned with posix_spawn, not Foundation's `Process`: `Process` watches each child through
/// a socket the child inherits, and systemd-socket-activate closes that socket before it
/// execs orchd, so `Process` would take orchd for dead and block its only monitor thread in
/// `waitpid` on it, hanging every other `Process` in the test run.
final class SocketActivator {
    private let pid: pid_t
    private let errorFD: Int32
    private let collected = LockedData()
    private let drained = DispatchSemaphore(value: 0)
    private var status: Int32?

    /// Starts it and returns once it listens (it says so on stderr).
    init(sockets: [String], command: [String], environment: [String: String]) throws {
        var pipeFDs: [Int32] = [0, 0]
        guard cposix_pipe_cloexec(&pipeFDs) == 0 else { throw TestFailure("pipe2: \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
        // Other tests' pipes must not leak into this long-lived child.
        cposix_spawn_file_actions_addclosefrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        // It hands the command only a few variables of its own environment (PATH, TERM, ...):
        // pass $NOTIFY_SOCKET on explicitly, as systemd would set it.
        let notify = environment["NOTIFY_SOCKET"].map { ["-E", "NOTIFY_SOCKET=" + $0] } ?? []
        let arguments = ["systemd-socket-activate"] + sockets.flatMap { ["-l", $0] } + notify + command
        let environmentLines = environment.map { "\($0.key)=\($0.value)" }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environmentLines.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/usr/bin/systemd-socket-activate", &actions, &attributes, argv, envp)
        close(pipeFDs[1])
        guard result == 0 else {
            close(pipeFDs[0])
            throw TestFailure("posix_spawn systemd-socket-activate: \(result)")
        }
        self.pid = pid
        errorFD = pipeFDs[0]

        // Block on the pipe until every socket is announced ("Listening on PATH as N."), for
        // 30 s at most (deinit kills it).
        var text = ""
        while sockets.contains(where: { !text.contains("Listening on \($0)") }) {
            var entry = pollfd(fd: errorFD, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 30_000) == 1 else { throw TestFailure("systemd-socket-activate said nothing more for 30 s: \(text)") }
            guard let chunk = Self.read(errorFD) else { throw TestFailure("systemd-socket-activate exited: \(text)") }
            text += chunk
        }
        collected.set(Data(text.utf8))
        // Keep draining in the background (orchd inherits this stderr) so no write blocks.
        let (fd, collected, drained) = (errorFD, collected, drained)
        DispatchQueue(label: "test.activator.drain").async {
            while let chunk = Self.read(fd) { collected.set(collected.get() + Data(chunk.utf8)) }
            drained.signal()
        }
    }

    deinit {
        kill()
        close(errorFD)
    }

    private static func read(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }
    }

    /// What it (and then orchd, which inherits its stderr) wrote; complete once it exited.
    var standardError: String { String(decoding: collected.get(), as: UTF8.self) }

    /// SIGTERM (orchd is the same process after exec), then its exit status.
    func stop() -> Int32 {
        Glibc.kill(pid, SIGTERM)
        return wait()
    }

    /// Waits for it to exit; its exit status (128+N when killed by signal N). One still running
    /// after ``TestDaemon/commandTimeLimit`` is killed (137), failing its test instead of
    /// hanging it.
    func wait() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        waiting(for: pid, atMost: TestDaemon.commandTimeLimit) {
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        }
        let exited = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        status = exited
        // Once it is gone the pipe reaches end-of-file and the drain finishes (unless a process
        // it left running holds the pipe: then what was drained is all there is).
        _ = drained.wait(timeout: .now() + 10)
        return exited
    }

    /// Kills it if it still runs (cleanup).
    func kill() {
        guard status == nil else { return }
        Glibc.kill(pid, SIGKILL)
        _ = wait()
    }
}
