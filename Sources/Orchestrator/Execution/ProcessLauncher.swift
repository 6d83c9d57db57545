import CPosix
import Foundation

/// Starts job processes with posix_spawn(3), cleanly isolated from the daemon.
///
/// Each process:
/// - leads a new session and process group (`POSIX_SPAWN_SETSID`), so pgid == pid and a
///   teardown can signal the whole group;
/// - starts with an empty signal mask and every catchable signal at its default disposition
///   (`POSIX_SPAWN_SETSIGMASK`, `POSIX_SPAWN_SETSIGDEF`), whatever the daemon blocks or
///   ignores;
/// - sees only fds 0-2 (posix_spawn_file_actions_addclosefrom_np(3)): `/dev/null`, then the
///   two log files;
/// - starts in the request's working directory (posix_spawn_file_actions_addchdir_np(3)).
///
/// This is one executor. `Foundation.Process` is not used: its children inherit the daemon's
/// signal mask and some of its descriptors, and waiting for its exit polls.
public struct ProcessLauncher: Sendable {
    /// Creates a launcher. It holds no state.
    public init() {}

    /// Starts `request`'s process and opens a pidfd for it.
    ///
    /// - Parameter request: what to run, where, and where its output goes.
    /// - Returns: the running process; its `pidfd` must be handed to a ``ChildReaper`` (which
    ///   closes it) or closed by the caller.
    /// - Throws: ``LaunchError`` when the argument vector is empty (`EINVAL`), the command is
    ///   not found in `PATH` (`ENOENT`, "command not found: foo") or not executable
    ///   (`EACCES`), the working directory is missing or not a directory, a log file cannot
    ///   be opened, or posix_spawn(3) fails — including an exec(3) failure in the child,
    ///   which glibc reports as posix_spawn's return value.
    public func launch(_ request: LaunchRequest) throws(LaunchError) -> LaunchedProcess {
        guard let command = request.arguments.first, !command.isEmpty else {
            throw LaunchError(code: EINVAL, message: "the command is empty")
        }
        try checkWorkingDirectory(request.workingDirectory)
        let executable = try resolveExecutable(command, request: request)

        let outputFD = try openLog(request.standardOutputPath)
        defer { close(outputFD) }
        var errorFD = outputFD
        if request.standardErrorPath != request.standardOutputPath {
            errorFD = try openLog(request.standardErrorPath)
        }
        defer { if errorFD != outputFD { close(errorFD) } }

        let pid = try spawn(executable, request: request, outputFD: outputFD, errorFD: errorFD)

        let pidfd = cposix_pidfd_open(pid)
        guard pidfd >= 0 else {
            let code = errno
            abandon(pid)
            throw LaunchError(code: code, context: "pidfd_open for process \(pid)")
        }
        // The child cannot be reaped before we do, so /proc/PID/stat exists even if it
        // already exited (as a zombie).
        guard let startTicks = ProcStat.startTicks(pid: pid) else {
            close(pidfd)
            abandon(pid)
            throw LaunchError(code: EIO, message: "cannot read /proc/\(pid)/stat")
        }
        return LaunchedProcess(pid: pid, processStartTicks: startTicks, bootID: ProcStat.bootID, pidfd: pidfd)
    }

    // MARK: - Steps

    /// Fails early with a clear message; the child's chdir would only say ENOENT.
    private func checkWorkingDirectory(_ path: String) throws(LaunchError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw LaunchError(code: errno, context: "working directory \(path)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw LaunchError(code: ENOTDIR, context: "working directory \(path)")
        }
    }

    /// Finds `command` as execvp(3) would, but in the job's `PATH`, not the daemon's.
    private func resolveExecutable(_ command: String, request: LaunchRequest) throws(LaunchError) -> String {
        if command.contains("/") { return command }
        let searchPath = request.environment["PATH"] ?? LaunchRequest.defaultSearchPath
        var deniedCandidate: String?
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            // An empty entry means the current directory: the job's, not the daemon's.
            var base = directory.isEmpty ? request.workingDirectory : String(directory)
            if !base.hasPrefix("/") { base = request.workingDirectory + "/" + base }
            let candidate = base + "/" + command
            var info = stat()
            guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if access(candidate, X_OK) == 0 { return candidate }
            deniedCandidate = deniedCandidate ?? candidate
        }
        if let deniedCandidate {
            throw LaunchError(code: EACCES, message: "permission denied: \(deniedCandidate)")
        }
        throw LaunchError(code: ENOENT, message: "command not found: \(command)")
    }

    /// Creates or truncates a log file, mode exactly 0640 whatever the umask, close-on-exec
    /// in the daemon so no other job inherits it.
    private func openLog(_ path: String) throws(LaunchError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0o640)
        guard fd >= 0 else {
            throw LaunchError(code: errno, context: "cannot open log file \(path)")
        }
        _ = fchmod(fd, 0o640)
        return fd
    }

    private func spawn(
        _ executable: String, request: LaunchRequest, outputFD: Int32, errorFD: Int32
    ) throws(LaunchError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        var setupError: Int32 = 0
        func check(_ result: Int32) { if setupError == 0 && result != 0 { setupError = result } }
        check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0))
        // dup2 clears FD_CLOEXEC on the target, so 1 and 2 survive the exec.
        check(posix_spawn_file_actions_adddup2(&actions, outputFD, 1))
        check(posix_spawn_file_actions_adddup2(&actions, errorFD, 2))
        check(cposix_spawn_file_actions_addclosefrom(&actions, 3))
        check(cposix_spawn_file_actions_addchdir(&actions, request.workingDirectory))

        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        check(posix_spawnattr_setsigmask(&attributes, &emptyMask))
        // Every signal but KILL and STOP, glibc's internal 32 and 33 included: sigfillset(3)
        // leaves those out, and glibc's posix_spawn then sets them SIG_IGN in the child,
        // where the ignore survives exec into the job.
        var defaults = sigset_t()
        cposix_sigset_fill_all(&defaults)
        check(posix_spawnattr_setsigdefault(&attributes, &defaults))
        let flags = Int32(cposix_spawn_flag_setsid()) | Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)
        check(posix_spawnattr_setflags(&attributes, Int16(flags)))
        guard setupError == 0 else {
            throw LaunchError(code: setupError, context: "posix_spawn setup")
        }

        let argv = CStringArray(request.arguments)
        let envp = CStringArray(request.environment.map { "\($0.key)=\($0.value)" })
        defer {
            argv.free()
            envp.free()
        }
        var pid: pid_t = 0
        // Registered under the lock that the orphan reaper scans with: it must never take
        // this child for an orphan and reap it before its pidfd watcher does.
        let result = SpawnedProcesses.pids.withLock { pids in
            let result = posix_spawn(&pid, executable, &actions, &attributes, argv.pointers, envp.pointers)
            if result == 0 { pids.insert(pid) }
            return result
        }
        guard result == 0 else {
            throw LaunchError(code: result, context: "posix_spawn \(executable)")
        }
        return pid
    }

    /// Kills and reaps a child we cannot track, so it neither runs unwatched nor stays a
    /// zombie.
    private func abandon(_ pid: pid_t) {
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        SpawnedProcesses.reaped(pid)
    }
}
