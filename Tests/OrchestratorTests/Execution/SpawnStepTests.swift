import CPosix
import Foundation
@testable import Orchestrator
import Testing

/// cposix_spawn reports which step of a start failed, and the launcher names that step.
@Suite("Launch errors name the failed step")
struct SpawnStepTests {
    /// Calls cposix_spawn directly and returns (step, errno), or nil when it started a process
    /// (which is then killed and reaped).
    /// The log files are created by path (no kept directory descriptor) unless
    /// `stdoutDirectoryFD` is given, with `stdoutPath`'s last component as the name.
    private func spawnStep(
        path: String = "/bin/true", workingDirectory: String = "/", stdoutPath: String, stderrPath: String? = nil,
        stdoutDirectoryFD: Int32 = -1, cgroupFD: Int32 = -1
    ) -> (step: UInt32, code: Int32)? {
        let argv = CStringArray([path])
        let envp = CStringArray([])
        defer {
            argv.free()
            envp.free()
        }
        var argvPointers = argv.pointers
        var envpPointers = envp.pointers
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        var step: Int32 = 0
        var code: Int32 = 0
        let result = argvPointers.withUnsafeMutableBufferPointer { argvBuffer in
            envpPointers.withUnsafeMutableBufferPointer { envpBuffer in
                path.withCString { cPath in
                    workingDirectory.withCString { directory in
                        let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
                        defer { close(input) }
                        return stdoutPath.withCString { outPath in
                            String(stdoutPath.split(separator: "/").last ?? "").withCString { outName in
                                (stderrPath ?? "").withCString { errPath in
                                    var request = cposix_spawn_request(
                                        path: cPath, argv: argvBuffer.baseAddress, envp: envpBuffer.baseAddress,
                                        working_directory: directory, stdin_fd: input,
                                        stdout_log: cposix_spawn_log(directory_fd: stdoutDirectoryFD, name: outName, path: outPath, mode: 0o640),
                                        stderr_log: cposix_spawn_log(
                                            directory_fd: -1, name: stderrPath == nil ? nil : errPath, path: errPath, mode: 0o640),
                                        cgroup_fd: cgroupFD, change_identity: 0, uid: 0, gid: 0, groups: nil, group_count: 0,
                                        search_paths: nil, search_path_count: 0, child_pid: nil)
                                    return SpawnedProcesses.register { (cposix_spawn(&request, &pid, &pidfd, &step, &code), pid) }
                                }
                            }
                        }
                    }
                }
            }
        }
        if result == 0 {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            close(pidfd)
            SpawnedProcesses.reaped(pid)
            return nil
        }
        return (UInt32(bitPattern: step), code)
    }

    @Test("a working directory that is a file fails at the chdir step with ENOTDIR")
    func workingDirectoryStep() throws {
        let fixture = try ExecutionFixture()
        #expect(FileManager.default.createFile(atPath: fixture.path("file"), contents: Data()))
        let failure = try #require(spawnStep(workingDirectory: fixture.path("file"), stdoutPath: fixture.path("out")))
        #expect(failure.step == CPOSIX_SPAWN_STEP_WORKING_DIRECTORY.rawValue)
        #expect(failure.code == ENOTDIR)
    }

    @Test("a log file that cannot be created fails at its open step: standard output's, then standard error's")
    func logFileSteps() throws {
        let fixture = try ExecutionFixture()
        let out = try #require(spawnStep(stdoutPath: fixture.path("missing/1.out")))
        #expect(out.step == CPOSIX_SPAWN_STEP_OPEN_STDOUT.rawValue)
        #expect(out.code == ENOENT)
        let err = try #require(spawnStep(stdoutPath: fixture.path("1.out"), stderrPath: fixture.path("missing/1.err")))
        #expect(err.step == CPOSIX_SPAWN_STEP_OPEN_STDERR.rawValue)
        #expect(err.code == ENOENT)
    }

    @Test("a log file is created through the kept directory descriptor, mode 0640 whatever the umask")
    func logFileThroughDirectory() throws {
        let fixture = try ExecutionFixture()
        let directory = open(fixture.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(directory) }
        // The path names another, missing directory: only the descriptor can find the file's.
        #expect(spawnStep(stdoutPath: "/nonexistent-orchd-dir/7.out", stdoutDirectoryFD: directory) == nil)
        var info = stat()
        #expect(stat(fixture.path("7.out"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o640)
    }

    @Test("a kept directory descriptor whose directory was removed falls back to the full path")
    func staleDirectoryDescriptor() throws {
        let fixture = try ExecutionFixture()
        let logs = fixture.path("logs")
        #expect(mkdir(logs, 0o700) == 0)
        let stale = open(logs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(stale) }
        #expect(rmdir(logs) == 0)
        #expect(mkdir(logs, 0o700) == 0)
        #expect(spawnStep(stdoutPath: logs + "/8.out", stdoutDirectoryFD: stale) == nil)
        #expect(FileManager.default.fileExists(atPath: logs + "/8.out"))
    }

    @Test("a missing program fails at the exec step")
    func execStep() throws {
        let fixture = try ExecutionFixture()
        let failure = try #require(spawnStep(path: "/nonexistent/orchd-no-such-program", stdoutPath: fixture.path("out")))
        #expect(failure.step == CPOSIX_SPAWN_STEP_EXEC.rawValue)
        #expect(failure.code == ENOENT)
    }

    @Test("a cgroup fd that is no cgroup fails at the clone step")
    func cloneStep() throws {
        let fixture = try ExecutionFixture()
        let fd = open(fixture.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(fd) }
        let failure = try #require(spawnStep(stdoutPath: fixture.path("out"), cgroupFD: fd))
        #expect(failure.step == CPOSIX_SPAWN_STEP_CLONE.rawValue)
        #expect(failure.code == EBADF)
    }

    @Test("a start without failure reports nothing")
    func success() throws {
        let fixture = try ExecutionFixture()
        #expect(spawnStep(stdoutPath: fixture.path("out")) == nil)
    }

    @Test("each step's message names the step and its file", arguments: [
        (CPOSIX_SPAWN_STEP_WORKING_DIRECTORY, EACCES, "cannot enter working directory /w: Permission denied"),
        (CPOSIX_SPAWN_STEP_STDIN, EMFILE, "cannot open /dev/null as standard input: Too many open files"),
        (CPOSIX_SPAWN_STEP_OPEN_STDOUT, ENOENT, "cannot open log file /l/7.out: No such file or directory"),
        (CPOSIX_SPAWN_STEP_OPEN_STDERR, EACCES, "cannot open log file /l/7.err: Permission denied"),
        (CPOSIX_SPAWN_STEP_STDOUT, EBADF, "cannot use log file /l/7.out as standard output: Bad file descriptor"),
        (CPOSIX_SPAWN_STEP_STDERR, EBADF, "cannot use log file /l/7.err as standard error: Bad file descriptor"),
        (CPOSIX_SPAWN_STEP_EXEC, EACCES, "cannot execute /bin/x: Permission denied"),
        (CPOSIX_SPAWN_STEP_CLONE, EBUSY, "cannot start the process in cgroup /cg/job-7-1: Device or resource busy"),
        (CPOSIX_SPAWN_STEP_SESSION, EPERM, "cannot start a new session: Operation not permitted"),
    ])
    func stepMessages(step: cposix_spawn_step, code: Int32, message: String) {
        let request = LaunchRequest(
            arguments: ["x"], workingDirectory: "/w", environment: [:], standardOutputPath: "/l/7.out",
            standardErrorPath: "/l/7.err", cgroup: Cgroup(path: "/cg/job-7-1"))
        let error = ProcessLauncher.stepError(step: Int32(bitPattern: step.rawValue), code: code, executable: "/bin/x", request: request)
        #expect(error.message == message)
        #expect(error.code == code)
    }

    @Test("a working directory that is a file is refused, naming the directory")
    func workingDirectoryIsFile() throws {
        let fixture = try ExecutionFixture()
        #expect(FileManager.default.createFile(atPath: fixture.path("file"), contents: Data()))
        var request = fixture.request(["true"])
        request.workingDirectory = fixture.path("file")
        let error = #expect(throws: LaunchError.self) { _ = try fixture.launcher.launch(request) }
        #expect(error?.message == "cannot enter working directory \(fixture.path("file")): Not a directory")
    }

    @Test("a cgroup path outside the cgroup file system fails naming the cgroup, and is removed")
    func launchIntoNonCgroup() throws {
        let fixture = try ExecutionFixture()
        var request = fixture.request(["true"])
        request.cgroup = Cgroup(path: fixture.path("not-a-cgroup"))
        let error = #expect(throws: LaunchError.self) { _ = try fixture.launcher.launch(request) }
        #expect(error?.message == "cannot start the process in cgroup \(fixture.path("not-a-cgroup")): Bad file descriptor")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("not-a-cgroup")))
    }
}
