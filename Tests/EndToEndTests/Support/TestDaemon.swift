import Foundation
import Glibc
import Orchestrator
import TestWaitLimits

/// A real `orchd` started in its own temporary directory, with its own socket and a notify
/// listener, driven with the real `orchctl`. Ready means `READY=1` arrived: no sleeps.
final class TestDaemon {
    let directory: String
    let stateDirectory: String
    let socketPath: String
    let notify: NotifyListener
    /// The daemon's configuration file (`--config`), created with the text given to `init`.
    let configurationFile: String
    private(set) var process: Process?
    private let concurrency: Int?
    private let arguments: [String]
    private let environment: [String: String]
    /// A program (and its arguments) that execs orchd: orchd's path and arguments follow.
    private let launcher: [String]
    /// Paths of the test's removed with the daemon's directory.
    private let extraPaths: [String]
    private var standardErrorFile: String { directory + "/orchd.stderr" }

    /// Creates the directory and starts the daemon, returning once it reported READY=1.
    /// - Parameters:
    ///   - concurrency: `--concurrency`; `nil` leaves it to the configuration file.
    ///   - configuration: the text of the configuration file passed as `--config` (by
    ///     default empty, so that a machine's own /etc/orchd/orchd.conf never leaks in).
    ///   - arguments: more arguments for every start.
    ///   - environment: more environment variables for every start.
    ///   - launcher: a program that execs orchd (given as its next arguments), e.g. to start
    ///     it in a new mount namespace; empty: orchd itself.
    ///   - sharedWithUsers: the directory is 0755, so that other users reach the socket (a
    ///     root orchd's, which every user may connect to).
    ///   - user: run orchd as this user (a per-user orchd) instead of root; the directory is
    ///     theirs.
    ///   - removing: more paths of the test's, removed with the daemon's directory.
    init(
        concurrency: Int? = 2, configuration: String = "", arguments: [String] = [], environment: [String: String] = [:],
        launcher: [String] = [], sharedWithUsers: Bool = false, user: TestUser? = nil, removing: [String] = []
    ) throws {
        extraPaths = removing
        var template = Array("/tmp/orchd-e2e-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        directory = String(cString: created)
        if sharedWithUsers { chmod(directory, 0o755) }
        stateDirectory = directory + "/state"
        socketPath = directory + "/orchd.sock"
        notify = try NotifyListener(path: directory + "/notify.sock")
        configurationFile = directory + "/orchd.conf"
        self.concurrency = concurrency
        self.arguments = arguments
        self.environment = environment
        self.launcher = user.map { ["/usr/bin/setpriv", "--reuid=\($0.uid)", "--regid=\($0.gid)", "--init-groups", "--"] } ?? launcher
        try writeConfiguration(configuration)
        if let user {
            // orchd as that user must reach its directory and the notify socket.
            chown(directory, user.uid, user.gid)
            chmod(notify.path, 0o666)
        }
        try start()
    }

    deinit {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // A killed daemon leaves its jobs' processes and its cgroup subtree behind.
        CgroupSupport.cleanUp(stateDirectory: stateDirectory, cgroup: Containment.subtreePath(stateDirectory: stateDirectory))
        try? FileManager.default.removeItem(atPath: directory)
        for path in extraPaths { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The daemon's stderr so far, for failure messages.
    var daemonLog: String {
        (try? String(contentsOfFile: standardErrorFile, encoding: .utf8)) ?? ""
    }

    /// Replaces the configuration file's text (then send SIGHUP to reload it).
    func writeConfiguration(_ text: String) throws {
        try text.write(toFile: configurationFile, atomically: true, encoding: .utf8)
    }

    /// Sends `signal` to the daemon.
    func send(_ signal: Int32) throws {
        guard let process else { throw TestFailure("orchd is not running") }
        kill(process.processIdentifier, signal)
    }

    /// The arguments of every start: paths, `--config`, concurrency, a short kill grace, and
    /// no drain at SIGTERM (a test that wants one passes `--drain-timeout` itself: later flags win).
    var commonArguments: [String] {
        ["--state-dir", stateDirectory, "--socket", socketPath, "--config", configurationFile, "--kill-grace", "2s",
         "--drain-timeout", "0"]
            + (concurrency.map { ["--concurrency", String($0)] } ?? []) + arguments
    }

    /// Starts `orchd` (again) and waits for READY=1.
    /// - Parameters:
    ///   - extraArguments: arguments after those of every start.
    ///   - launcher: a launcher for this start only, instead of the one given to `init`.
    func start(extraArguments: [String] = [], launcher: [String]? = nil) throws {
        let process = Process()
        let command = (launcher ?? self.launcher) + [Binaries.orchd] + commonArguments + extraArguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var environment = ProcessInfo.processInfo.environment.merging(self.environment) { $1 }
        environment["NOTIFY_SOCKET"] = notify.path
        process.environment = environment
        // Each start begins an empty log, so a wait for a line after a restart never finds
        // the previous incarnation's.
        _ = FileManager.default.createFile(atPath: standardErrorFile, contents: nil)
        let log = FileHandle(forWritingAtPath: standardErrorFile)!
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        guard notify.waitFor("READY=1") != nil else {
            throw TestFailure("orchd did not report READY=1:\n\(daemonLog)")
        }
    }

    /// Waits until the daemon's log holds `text`: woken by inotify(7) on the log file, never
    /// by polling.
    /// - Parameter timeout: the longest wait, in seconds.
    /// - Returns: whether the text appeared in time.
    func waitForLog(containing text: String, timeout: Double = 30) -> Bool {
        let watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard watch >= 0 else { return false }
        defer { close(watch) }
        guard inotify_add_watch(watch, standardErrorFile, UInt32(IN_MODIFY)) >= 0 else { return false }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if daemonLog.contains(text) { return true }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return false }
            var pollFD = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            _ = poll(&pollFD, 1, Int32(left * 1000))
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        }
    }

    /// Sends SIGTERM and waits for the daemon to exit.
    /// - Returns: its exit status.
    @discardableResult
    func stop() -> Int32 {
        guard let process else { return -1 }
        kill(process.processIdentifier, SIGTERM)
        // An orchd that never stops fails its test (killed, status 9) instead of hanging the run.
        _ = process.waitUntilExit(atMost: Self.commandTimeLimit)
        self.process = nil
        return process.terminationStatus
    }

    /// Kills the daemon with SIGKILL, as a crash would, and waits for it to be gone.
    func crash() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Runs `orchctl --socket SOCKET ARGUMENTS...`.
    func orchctl(_ arguments: [String], input: String? = nil, workingDirectory: String? = nil) throws -> CommandResult {
        try Self.run(Binaries.orchctl, ["--socket", socketPath] + arguments, input: input, workingDirectory: workingDirectory)
    }

    /// Runs `orchctl --socket SOCKET ARGUMENTS...` as `user`.
    func orchctl(as user: TestUser, _ arguments: [String], input: String? = nil) throws -> CommandResult {
        try user.run(Binaries.orchctl, ["--socket", socketPath] + arguments, input: input)
    }

    /// How long ``run(_:_:input:workingDirectory:environment:)`` lets a program run before it
    /// kills it: a command that hangs fails its test instead of holding up the whole run. The
    /// tests wait as long for orchd or orchctl to exit.
    static let commandTimeLimit: TimeInterval = 300

    /// Runs a program to its end and captures its output; one still running after
    /// ``commandTimeLimit`` is killed, and its standard error says so, as it does when a process
    /// the program left running keeps its output open.
    static func run(_ path: String, _ arguments: [String], input: String? = nil, workingDirectory: String? = nil, environment: [String: String]? = nil) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        // Read both pipes concurrently so neither can fill up and block the child.
        let (outputData, errorData) = (LockedData(), LockedData())
        let group = DispatchGroup()
        // Each on a queue of its own (a thread of its own), never a global queue: see limitTimers.
        DispatchQueue(label: "test.run.output").async(group: group) { outputData.set(output.fileHandleForReading.readDataToEndOfFile()) }
        DispatchQueue(label: "test.run.errors").async(group: group) { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        let exited = try waiting(for: process.processIdentifier, atMost: commandTimeLimit) {
            if let input {
                inputPipe.fileHandleForWriting.write(Data(input.utf8))
                try inputPipe.fileHandleForWriting.close()
            }
            process.waitUntilExit()
        }
        // A process it started that keeps a pipe open (a daemon it left running, say) would hold
        // the pipe's end for ever: the output is what came by a few seconds after its exit.
        let ended = group.wait(timeout: .now() + 10) == .success
        let killedNote = exited ? "" : "\n[killed by the test: still running after \(Int(commandTimeLimit)) s]"
        let openNote = ended ? "" : "\n[output not read: still open 10 s after it exited, held by a process it started]"
        let standardOutput = outputData.get()
        return CommandResult(
            status: process.terminationStatus,
            standardOutput: String(decoding: standardOutput, as: UTF8.self),
            standardError: String(decoding: errorData.get(), as: UTF8.self) + killedNote + openNote,
            outputBytes: [UInt8](standardOutput))
    }
}

/// Data handed from a reader thread to the test.
final class LockedData: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}

/// A failed test precondition with a message.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
