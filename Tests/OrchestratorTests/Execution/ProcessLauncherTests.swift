import CPosix
import Foundation
import Orchestrator
import OrchestratorAPI
import Testing

@Suite("ProcessLauncher and ChildReaper")
struct ProcessLauncherTests {
    @Test("a non-zero exit code is recorded as failed(3)")
    func exitCodeIsRecorded() throws {
        let fixture = try ExecutionFixture()
        let (status, _) = try fixture.run(fixture.request(["sh", "-c", "exit 3"]))
        #expect(status == .exited(3))
        #expect(status.jobResult == .failed(exitCode: 3))
        #expect(TerminationStatus.exited(0).jobResult == .succeeded)
    }

    @Test("stdout and stderr land in their files byte-exact, NUL and invalid UTF-8 included")
    func outputIsByteExact() throws {
        let fixture = try ExecutionFixture()
        let script = #"printf 'a\000\377b\n'; printf 'e\000\376' >&2"#
        let (status, _) = try fixture.run(fixture.request(["sh", "-c", script]))
        #expect(status == .exited(0))
        #expect(fixture.contents("out") == [0x61, 0x00, 0xFF, 0x62, 0x0A])
        #expect(fixture.contents("err") == [0x65, 0x00, 0xFE])
        var info = stat()
        #expect(stat(fixture.path("out"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    @Test("the argument vector reaches the process exactly, without a shell")
    func argumentsRoundTrip() throws {
        let fixture = try ExecutionFixture()
        let (status, _) = try fixture.run(fixture.request(["printf", "%s|", "a b", "", "*", "$HOME"]))
        #expect(status == .exited(0))
        #expect(fixture.text("out") == "a b||*|$HOME|")
    }

    @Test("a process killed by a signal is reported as signaled")
    func signaledResult() throws {
        let fixture = try ExecutionFixture()
        let (status, _) = try fixture.run(fixture.request(["sh", "-c", "kill -9 $$"]))
        #expect(status == .signaled(SIGKILL))
        #expect(status.jobResult == .signaled(signal: SIGKILL))
    }

    @Test("an unknown command fails to launch with 'command not found'")
    func commandNotFound() throws {
        let fixture = try ExecutionFixture()
        let error = #expect(throws: LaunchError.self) {
            _ = try fixture.launcher.launch(fixture.request(["orchd-no-such-command-xyz"]))
        }
        #expect(error?.code == ENOENT)
        #expect(error?.message == "command not found: orchd-no-such-command-xyz")
    }

    @Test("a missing working directory fails to launch and names the directory")
    func missingWorkingDirectory() throws {
        let fixture = try ExecutionFixture()
        var request = fixture.request(["true"])
        request.workingDirectory = fixture.path("missing")
        let error = #expect(throws: LaunchError.self) { _ = try fixture.launcher.launch(request) }
        #expect(error?.message == "cannot enter working directory \(fixture.path("missing")): No such file or directory")
    }

    @Test("output sent to a device (a hook's /dev/null) leaves the device's mode alone")
    func deviceOutputKeepsItsMode() throws {
        let fixture = try ExecutionFixture()
        var before = stat()
        #expect(stat("/dev/null", &before) == 0)
        var request = fixture.request(["true"])
        request.standardOutputPath = "/dev/null"
        request.standardErrorPath = "/dev/null"
        #expect(try fixture.run(request).status == .exited(0))
        var after = stat()
        #expect(stat("/dev/null", &after) == 0)
        #expect(after.st_mode == before.st_mode)
    }

    @Test("an unopenable log file fails to launch and names the file")
    func unopenableLogFile() throws {
        let fixture = try ExecutionFixture()
        var request = fixture.request(["true"])
        // Its directory is a regular file: neither the directory nor the file can be made.
        #expect(FileManager.default.createFile(atPath: fixture.path("plain"), contents: nil))
        request.standardOutputPath = fixture.path("plain/out")
        let error = #expect(throws: LaunchError.self) { _ = try fixture.launcher.launch(request) }
        #expect(error?.message == "cannot open log file \(fixture.path("plain/out")): Not a directory")
    }

    @Test("an exec failure in the child names the exec step and the program")
    func execFailure() throws {
        let fixture = try ExecutionFixture()
        let script = fixture.path("not-executable")
        #expect(FileManager.default.createFile(atPath: script, contents: Data("#!/bin/sh\n".utf8)))
        let error = #expect(throws: LaunchError.self) { _ = try fixture.launcher.launch(fixture.request([script])) }
        #expect(error?.code == EACCES)
        #expect(error?.message == "cannot execute \(script): Permission denied")
    }

    @Test("the job sees only fds 0-2 even when the parent holds an inheritable fd")
    func onlyStandardDescriptors() throws {
        let fixture = try ExecutionFixture()
        let leaked = open("/dev/null", O_RDONLY)  // deliberately without O_CLOEXEC
        #expect(leaked > 2)
        defer { close(leaked) }
        let (status, _) = try fixture.run(fixture.request(["sh", "-c", "ls /proc/$$/fd"]))
        #expect(status == .exited(0))
        #expect(fixture.text("out") == "0\n1\n2\n")
    }

    @Test("the job starts with an empty signal mask and default dispositions")
    func cleanSignals() throws {
        let fixture = try ExecutionFixture()
        // Block SIGTERM in this thread and ignore SIGTERM and SIGPIPE in the process, as a
        // daemon might; the child must see none of it.
        var block = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGTERM)
        var oldMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &block, &oldMask)
        let oldTerm = signal(SIGTERM, SIG_IGN)
        let oldPipe = signal(SIGPIPE, SIG_IGN)
        defer {
            signal(SIGTERM, oldTerm)
            signal(SIGPIPE, oldPipe)
            pthread_sigmask(SIG_SETMASK, &oldMask, nil)
        }
        let (status, _) = try fixture.run(fixture.request(["grep", "^Sig", "/proc/self/status"]))
        #expect(status == .exited(0))
        let lines = fixture.text("out").split(separator: "\n")
        #expect(lines.contains("SigBlk:\t0000000000000000"))
        #expect(lines.contains("SigIgn:\t0000000000000000"))
    }

    @Test("the job leads its own process group and session: pgid == sid == pid")
    func ownProcessGroup() throws {
        let fixture = try ExecutionFixture()
        // Fields 5 and 6 of /proc/self/stat (pgrp, session) of the shell, then its pid.
        let script = #"read -r line < /proc/$$/stat; set -- ${line##*) }; echo "$3 $4 $$""#
        let (status, process) = try fixture.run(fixture.request(["sh", "-c", script]))
        #expect(status == .exited(0))
        #expect(fixture.text("out") == "\(process.pid) \(process.pid) \(process.pid)\n")
        #expect(process.processStartTicks > 0)
        #expect(process.bootID.count == 36)
    }

    @Test("argv[0] is looked up in the request's PATH, not the daemon's")
    func pathLookupUsesRequestEnvironment() throws {
        let fixture = try ExecutionFixture()
        let bin = fixture.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        // A symlink, not a freshly written script: a concurrent test's spawn can briefly hold
        // a just-written file's fd, and exec then fails with ETXTBSY.
        #expect(symlink("/bin/echo", bin + "/orchd-test-tool") == 0)
        let (status, _) = try fixture.run(fixture.request(["orchd-test-tool", "x"], environment: ["PATH": bin + ":/bin"]))
        #expect(status == .exited(0))
        #expect(fixture.text("out") == "x\n")
    }
}
