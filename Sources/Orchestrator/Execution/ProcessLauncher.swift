import CPosix
import Foundation

/// Starts job processes with clone3(2) (`cposix_spawn` in CPosix), cleanly isolated from the
/// daemon.
///
/// Each process:
/// - starts in its cgroup when the request names one (`CLONE_INTO_CGROUP`: it is a member
///   from its first instruction, so nothing it forks can start outside);
/// - leads a new session and process group (setsid(2)), so pgid == pid and a teardown can
///   signal the whole group;
/// - starts with an empty signal mask and every signal at its default disposition, glibc's
///   internal 32 and 33 included, whatever the daemon blocks or ignores;
/// - sees only fds 0-2: `/dev/null` (opened here by the daemon), then the two log files,
///   which the child creates itself relative to directory descriptors the daemon keeps
///   (``DirectoryDescriptors``; close_range(2) `CLOSE_RANGE_CLOEXEC` marks every other fd);
/// - runs as the request's ``LaunchRequest/user`` when one is given: the child drops to
///   that user's groups, gid and uid, in that order, checks that it cannot regain root, and
///   only then creates its log files, enters the working directory (with the user's rights)
///   and execs. The cgroup
///   stays root's: the process is placed in it by clone3 before the drop, and cannot leave it.
///   `PR_SET_NO_NEW_PRIVS` is deliberately not set: after the drop the job has exactly the
///   privileges of that user's login, no capabilities, and the setuid programs a user relies
///   on (sudo, passwd, newgrp, crontab) keep working, as under cron or `at`;
/// - starts in the request's working directory.
///
/// One spawn path for both containments: without a cgroup the same clone3 call runs without
/// `CLONE_INTO_CGROUP`. A step that fails in the child is reported by name (``LaunchError``):
/// "cannot enter working directory /x: Permission denied" is told apart from "cannot execute
/// /x: Permission denied". `Foundation.Process` is not used: its children inherit the
/// daemon's signal mask and some of its descriptors, waiting for its exit polls, and it cannot
/// start a process in a cgroup.
public struct ProcessLauncher: Sendable {
    /// The log files' directories, kept open: a log file is created with one openat(2).
    private let logDirectories = DirectoryDescriptors()

    /// Creates a launcher. Its only state is the cache of open log directories.
    public init() {}

    /// Starts `request`'s process and opens a pidfd for it.
    ///
    /// - Parameter request: what to run, where, in which cgroup, and where its output goes.
    /// - Returns: the running process; its `pidfd` must be handed to a ``ChildReaper`` (which
    ///   closes it) or closed by the caller.
    /// - Throws: ``LaunchError`` when the argument vector is empty (`EINVAL`), the command is
    ///   not found in `PATH` (`ENOENT`, "command not found: foo") or not executable
    ///   (`EACCES`), or a step of the start fails, named in the message: the working
    ///   directory ("cannot enter working directory"), standard input, a log file, the
    ///   cgroup ("cannot create cgroup", "cannot start the process in cgroup"), or the
    ///   exec ("cannot execute").
    public func launch(_ request: LaunchRequest) throws(LaunchError) -> LaunchedProcess {
        try launch(request, spawning: nil)
    }

    /// Starts `request`'s process, its pid known to `spawning` while it is being started, so
    /// that a stop meanwhile can kill it (``SpawningChild``).
    /// - Throws: as ``launch(_:)``, and ``LaunchError`` when a child that runs as another user
    ///   was stopped (SIGSTOP) before its exec, and killed for it.
    func launch(_ request: LaunchRequest, spawning: SpawningChild?) throws(LaunchError) -> LaunchedProcess {
        guard let command = request.arguments.first, !command.isEmpty else {
            throw LaunchError(code: EINVAL, message: "the command is empty")
        }
        var account: UserAccount?
        if let uid = request.user {
            // Looked up at each launch: groups and home are the user's as they are now.
            guard let found = UserAccount.lookup(uid: uid) else {
                throw LaunchError(code: ESRCH, message: "no user with uid \(uid) in the password database")
            }
            account = found
        }
        let executable: String
        var searchPaths: [String] = []
        if account == nil {
            try checkWorkingDirectory(request.workingDirectory)
            executable = try resolveExecutable(command, request: request)
        } else {
            // For another user, the daemon looks at none of the job's paths with its own
            // rights: the child enters the directory and searches PATH as that user, so a job's
            // error never tells whether a file exists where the user may not look.
            executable = command
            if !command.contains("/") { searchPaths = searchCandidates(command, request: request) }
        }

        let inputFD = try openStandardInput()
        defer { close(inputFD) }
        // The directories now, as root: the files later, in the child, as the job's user.
        let outputLog = try logDirectories.directory(of: request.standardOutputPath, owner: account)
        // Both streams to one path: one file, shared offset, as `2>&1`.
        let errorLog = request.standardErrorPath == request.standardOutputPath
            ? nil : try logDirectories.directory(of: request.standardErrorPath, owner: account)

        var cgroupFD: Int32 = -1
        if let cgroup = request.cgroup {
            let code = cgroup.create()
            guard code == 0 else { throw LaunchError(code: code, context: "cannot create cgroup \(cgroup.path)") }
            cgroupFD = cgroup.openDirectory()
            guard cgroupFD >= 0 else {
                let code = errno
                cgroup.remove()
                throw LaunchError(code: code, context: "cannot open cgroup \(cgroup.path)")
            }
        }
        defer { if cgroupFD >= 0 { close(cgroupFD) } }

        let (pid, pidfd): (pid_t, Int32)
        // Another user's child is theirs to signal once it runs as them, before its exec.
        if account != nil { spawning?.watchForStop() }
        do {
            (pid, pidfd) = try spawn(
                executable, searchPaths: searchPaths, request: request, account: account, inputFD: inputFD,
                logs: (outputLog, errorLog), cgroupFD: cgroupFD, childPid: spawning?.pid)
        } catch {
            _ = spawning?.finished()
            request.cgroup?.remove()
            throw error
        }
        if spawning?.finished() == true {
            abandon(pid, pidfd: pidfd, cgroup: request.cgroup)
            throw LaunchError(code: EINTR, message: "its process was stopped by a signal (SIGSTOP from its user) before it could start, and was killed")
        }
        guard let startTicks = Self.startTicks(of: pid) else {
            let code = errno == 0 ? EIO : errno
            abandon(pid, pidfd: pidfd, cgroup: request.cgroup)
            // Not the errno, should it be a shortage: the process ran, so the launch must not
            // be tried again (a job would run twice).
            throw LaunchError(code: EIO, message: "cannot read /proc/\(pid)/stat (\(String(cString: strerror(code)))): the process was started and is stopped")
        }
        return LaunchedProcess(
            pid: pid, processStartTicks: startTicks, bootID: ProcStat.bootID, pidfd: pidfd, cgroup: request.cgroup)
    }

    // MARK: - Steps

    /// How long a started process's start time is tried for while orchd is short of
    /// descriptors or memory.
    static let startTimeReadLimit: Duration = .seconds(10)

    /// The start time of the process just spawned (`/proc/PID/stat`), which exists until orchd
    /// reaps it, even as a zombie. The process has exec'd already, so a read that fails for
    /// want of descriptors or memory is tried again, asking for descriptors each time (1 ms,
    /// doubling to 100 ms, for ``startTimeReadLimit``): taken for a shortage instead, the
    /// launch was made again and a job ran twice (120 `submit --wait` under a limit of 64).
    /// - Returns: the start time in clock ticks, or `nil` with `errno` set.
    static func startTicks(of pid: pid_t) -> UInt64? {
        var delay = Duration.milliseconds(1)
        let clock = ContinuousClock()
        let deadline = clock.now + startTimeReadLimit
        var tries = 0
        while true {
            errno = 0
            tries += 1
            if let ticks = ProcStat.startTicks(pid: pid) {
                if tries > 1 {
                    DaemonLog.warning("read the start time of process \(pid) only at try \(tries): orchd is short of file descriptors")
                }
                return ticks
            }
            let code = errno
            guard [EMFILE, ENFILE, ENOMEM].contains(code), clock.now < deadline else {
                errno = code
                return nil
            }
            DescriptorRelief.process.ask()
            // A sleep, not an event: nothing signals that a descriptor was freed. It is bounded,
            // happens only while orchd is short of them, and on the launching thread, which has
            // nothing else to do until the process is known.
            usleep(UInt32(delay.components.attoseconds / 1_000_000_000_000))
            delay = min(delay * 2, .milliseconds(100))
        }
    }

    /// Fails early with a clear message; the child's chdir would only say ENOENT.
    private func checkWorkingDirectory(_ path: String) throws(LaunchError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw LaunchError(code: errno, context: "cannot enter working directory \(path)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw LaunchError(code: ENOTDIR, context: "cannot enter working directory \(path)")
        }
    }

    /// The paths execvp(3) would try for `command`, in the job's `PATH`, not the daemon's.
    private func searchCandidates(_ command: String, request: LaunchRequest) -> [String] {
        let searchPath = request.environment["PATH"] ?? LaunchRequest.defaultSearchPath
        return searchPath.split(separator: ":", omittingEmptySubsequences: false).map { directory in
            // An empty entry means the current directory: the job's, not the daemon's.
            var base = directory.isEmpty ? request.workingDirectory : String(directory)
            if !base.hasPrefix("/") { base = request.workingDirectory + "/" + base }
            return base + "/" + command
        }
    }

    /// Finds `command` as execvp(3) would, but in the job's `PATH`, not the daemon's.
    private func resolveExecutable(_ command: String, request: LaunchRequest) throws(LaunchError) -> String {
        if command.contains("/") { return command }
        var deniedCandidate: String?
        for candidate in searchCandidates(command, request: request) {
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

    /// Standard input: `/dev/null`, opened here so that a job of another user gets it even
    /// where `/dev/null` is not readable by everyone; where the daemon itself may not open it
    /// (a per-user orchd on such a machine), the read end of an empty pipe whose write end is
    /// closed, which reads as end of file just the same.
    private func openStandardInput() throws(LaunchError) -> Int32 {
        let fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY)
        if fd >= 0 { return fd }
        let code = errno
        var ends: [Int32] = [-1, -1]
        guard code == EACCES || code == EPERM, cposix_pipe_cloexec(&ends) == 0 else {
            throw LaunchError(code: code, context: "cannot open /dev/null as standard input")
        }
        close(ends[1])
        return ends[0]
    }

    /// Creates or truncates a log file for a process orchd does not spawn itself (a Slurm
    /// batch job writes to it as its owner), mode exactly 0600, close-on-exec, its directory
    /// created when missing.
    ///
    /// For a job that runs as another user (`owner`), the directory and the file are that
    /// user's (mode 0700 and 0600), and since the user can put anything in their directory,
    /// the file is opened without following a symbolic link, without blocking on a FIFO, and
    /// truncated only once it is known to be a regular file with one link, made just now or
    /// owned by the user: a link planted there cannot make the root daemon clobber another file.
    func openLog(_ path: String, owner: UserAccount?) throws(LaunchError) -> Int32 {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try LogDirectory.prepare(String(path[..<slash]), owner: owner)
        }
        guard let owner else {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0o600)
            guard fd >= 0 else { throw LaunchError(code: errno, context: "cannot open log file \(path)") }
            // Only a file of orchd's own: a device such as /dev/null (a hook's output) keeps its mode.
            var info = stat()
            if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG { _ = fchmod(fd, 0o600) }
            return fd
        }
        let flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK
        var fd = open(path, flags | O_CREAT | O_EXCL, 0o600)
        let created = fd >= 0
        if !created && errno == EEXIST { fd = open(path, flags) }
        guard fd >= 0 else { throw LaunchError(code: errno, context: "cannot open log file \(path)") }
        var info = stat()
        // A file found there (a retry's) must be the user's own plain file; one just made is root's.
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1, created || info.st_uid == owner.uid
        else {
            close(fd)
            throw LaunchError(code: EPERM, message: "cannot open log file \(path): it is not a regular file of its own")
        }
        guard ftruncate(fd, 0) == 0, fchown(fd, owner.uid, owner.gid) == 0, fchmod(fd, 0o600) == 0,
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0
        else {
            let code = errno
            close(fd)
            throw LaunchError(code: code, context: "cannot prepare log file \(path)")
        }
        return fd
    }

    /// Starts the child, which creates the log files itself (``cposix_spawn_log``): mode
    /// exactly 0600 (a device such as a hook's /dev/null keeps its own), close-on-exec in the
    /// daemon so no other job inherits them, relative to their kept directories (`logs`: the
    /// standard output's, and the standard error's unless both streams share one file).
    ///
    /// For a job that runs as another user (`account`), the child opens them after dropping
    /// to that user, so the files are the user's from the start and nothing the user put in
    /// their directory can make root write anywhere: a symbolic link is not followed, a FIFO
    /// not blocked on, and an existing file is used (truncated) only if it is a regular file
    /// of the user's own with one link.
    private func spawn(
        _ executable: String, searchPaths: [String], request: LaunchRequest, account: UserAccount?, inputFD: Int32,
        logs: (output: (fd: Int32, name: String), error: (fd: Int32, name: String)?), cgroupFD: Int32,
        childPid: UnsafeMutablePointer<pid_t>?
    ) throws(LaunchError) -> (pid_t, Int32) {
        var environment = request.environment
        if let account {
            // As login(1) sets them: the job is the user's, whatever the client's environment said.
            environment["HOME"] = account.home
            environment["USER"] = account.name
            environment["LOGNAME"] = account.name
            environment["SHELL"] = account.shell
        }
        let argv = CStringArray(request.arguments)
        let envp = CStringArray(environment.map { "\($0.key)=\($0.value)" })
        let candidates = CStringArray(searchPaths)
        var groups = account?.groups ?? []
        defer {
            argv.free()
            envp.free()
            candidates.free()
        }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        var failedStep: Int32 = 0
        var failedErrno: Int32 = 0
        // Registered under the lock that the orphan reaper scans with: it must never take
        // this child for an orphan and reap it before its pidfd watcher does. (A child that
        // fails before exec is reaped inside cposix_spawn, still under the lock.)
        var argvPointers = argv.pointers
        var envpPointers = envp.pointers
        let candidatePointers = candidates.pointers.map { UnsafePointer($0) }
        let result = argvPointers.withUnsafeMutableBufferPointer { argvBuffer in
            envpPointers.withUnsafeMutableBufferPointer { envpBuffer in
                candidatePointers.withUnsafeBufferPointer { candidateBuffer in
                groups.withUnsafeMutableBufferPointer { groupBuffer in
                    executable.withCString { path in
                        request.workingDirectory.withCString { directory in
                            logs.output.name.withCString { outputName in
                                request.standardOutputPath.withCString { outputPath in
                                    (logs.error?.name ?? "").withCString { errorName in
                                        request.standardErrorPath.withCString { errorPath in
                                            var spawnRequest = cposix_spawn_request(
                                                path: path, argv: argvBuffer.baseAddress, envp: envpBuffer.baseAddress,
                                                working_directory: directory, stdin_fd: inputFD,
                                                stdout_log: cposix_spawn_log(
                                                    directory_fd: logs.output.fd, name: outputName, path: outputPath,
                                                    mode: 0o600),
                                                stderr_log: cposix_spawn_log(
                                                    directory_fd: logs.error?.fd ?? -1, name: logs.error == nil ? nil : errorName,
                                                    path: errorPath, mode: 0o600),
                                                cgroup_fd: cgroupFD, change_identity: account == nil ? 0 : 1,
                                                uid: account?.uid ?? 0, gid: account?.gid ?? 0,
                                                groups: UnsafePointer(groupBuffer.baseAddress),
                                                group_count: Int32(groupBuffer.count),
                                                search_paths: candidateBuffer.baseAddress,
                                                search_path_count: Int32(searchPaths.count), child_pid: childPid)
                                            return SpawnedProcesses.register {
                                                let result = cposix_spawn(&spawnRequest, &pid, &pidfd, &failedStep, &failedErrno)
                                                return (result, pid)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                }
            }
        }
        guard result == 0 else {
            throw Self.stepError(step: failedStep, code: failedErrno, executable: executable, request: request)
        }
        return (pid, pidfd)
    }

    /// The error for a failed step of cposix_spawn, naming the step and its file.
    /// - Parameters:
    ///   - step: a `cposix_spawn_step` value.
    ///   - code: the `errno` value.
    ///   - executable: the resolved path of the program.
    ///   - request: the request, for its paths.
    static func stepError(step: Int32, code: Int32, executable: String, request: LaunchRequest) -> LaunchError {
        let context: String
        switch UInt32(bitPattern: step) {
        case CPOSIX_SPAWN_STEP_CLONE.rawValue:
            context = request.cgroup.map { "cannot start the process in cgroup \($0.path)" } ?? "cannot create a process"
        case CPOSIX_SPAWN_STEP_SIGNALS.rawValue: context = "cannot reset the signal mask and dispositions"
        case CPOSIX_SPAWN_STEP_SESSION.rawValue: context = "cannot start a new session"
        case CPOSIX_SPAWN_STEP_WORKING_DIRECTORY.rawValue:
            context = "cannot enter working directory \(request.workingDirectory)"
        case CPOSIX_SPAWN_STEP_STDIN.rawValue: context = "cannot open /dev/null as standard input"
        case CPOSIX_SPAWN_STEP_OPEN_STDOUT.rawValue, CPOSIX_SPAWN_STEP_OPEN_STDERR.rawValue:
            let isOutput = UInt32(bitPattern: step) == CPOSIX_SPAWN_STEP_OPEN_STDOUT.rawValue
            let path = isOutput ? request.standardOutputPath : request.standardErrorPath
            // What the child refuses as the job's user: a link (O_NOFOLLOW), a FIFO without a
            // reader (O_NONBLOCK), a directory, or a file that is not its own with one link.
            if request.user != nil && [ELOOP, ENXIO, EISDIR, EPERM].contains(code) {
                return LaunchError(code: code, message: "cannot open log file \(path): it is not a regular file of its own")
            }
            context = "cannot open log file \(path)"
        case CPOSIX_SPAWN_STEP_STDOUT.rawValue:
            context = "cannot use log file \(request.standardOutputPath) as standard output"
        case CPOSIX_SPAWN_STEP_STDERR.rawValue:
            context = "cannot use log file \(request.standardErrorPath) as standard error"
        case CPOSIX_SPAWN_STEP_FDS.rawValue: context = "cannot close the daemon's file descriptors"
        case CPOSIX_SPAWN_STEP_EXEC.rawValue: context = "cannot execute \(executable)"
        case CPOSIX_SPAWN_STEP_SEARCH.rawValue:
            // Searched as the job's user: which candidate was refused is not the daemon's to say.
            return code == EACCES
                ? LaunchError(code: code, message: "permission denied: \(executable) (uid \(request.user ?? 0) may not search a directory in PATH or execute what it found)")
                : LaunchError(code: code, message: "command not found: \(executable)")
        case CPOSIX_SPAWN_STEP_GROUPS.rawValue: context = "cannot set the groups of uid \(request.user ?? 0)"
        case CPOSIX_SPAWN_STEP_GID.rawValue: context = "cannot set the group of uid \(request.user ?? 0)"
        case CPOSIX_SPAWN_STEP_UID.rawValue: context = "cannot become uid \(request.user ?? 0)"
        case CPOSIX_SPAWN_STEP_REGAIN.rawValue: context = "uid \(request.user ?? 0) could regain root; not starting the job"
        default: context = "cannot start \(executable)"
        }
        return LaunchError(code: code, context: context)
    }

    /// Kills and reaps a child we cannot track, so it neither runs unwatched nor stays a
    /// zombie.
    private func abandon(_ pid: pid_t, pidfd: Int32, cgroup: Cgroup?) {
        cgroup?.kill()
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(pidfd)
        SpawnedProcesses.reaped(pid)
    }
}
