import Foundation
import Orchestrator
import OrchestratorAPI
import Testing
import TestWaitLimits

/// The spawned child creates its log files relative to a directory the launcher keeps open;
/// for a job of another user it does so after dropping to that user, so nothing the user
/// puts in their log directory can make root write anywhere.
@Suite("Log files created by the child")
struct ChildLogFileTests {
    /// `nobody`: a user that exists on every test machine, with no files of its own.
    static let user: UInt32 = 65534

    /// A fixture with `<dir>/logs/` (root's, as orchd's log directory is) and a request that
    /// runs `arguments` as ``user`` in `/`, logging to `logs/<user>/<id>.1.out|.err`.
    private func setUp() throws -> ExecutionFixture {
        let fixture = try ExecutionFixture()
        #expect(mkdir(fixture.path("logs"), 0o711) == 0)
        return fixture
    }

    private func request(_ fixture: ExecutionFixture, _ arguments: [String], id: Int) -> LaunchRequest {
        var request = fixture.request(arguments)
        request.workingDirectory = "/"
        request.standardOutputPath = fixture.path("logs/\(Self.user)/\(id).1.out")
        request.standardErrorPath = fixture.path("logs/\(Self.user)/\(id).1.err")
        request.user = Self.user
        return request
    }

    private func owner(_ path: String) -> (uid: UInt32, mode: UInt32)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_uid, UInt32(info.st_mode & 0o7777))
    }

    /// The user's log directory as orchd makes it, with one job run in it.
    private func userDirectory(_ fixture: ExecutionFixture) throws -> String {
        #expect(try fixture.run(request(fixture, ["true"], id: 1)).status == .exited(0))
        return fixture.path("logs/\(Self.user)")
    }

    @Test("a job of another user writes log files that user created: theirs, mode 0600, in their own 0700 directory",
        .enabled(if: getuid() == 0, "changing identity needs root"))
    func filesAreTheUsers() throws {
        let fixture = try setUp()
        let (status, _) = try fixture.run(request(fixture, ["sh", "-c", "id -u; echo e >&2"], id: 1))
        #expect(status == .exited(0))
        #expect(fixture.text("logs/\(Self.user)/1.1.out") == "\(Self.user)\n")
        for name in ["1.1.out", "1.1.err"] {
            let file = try #require(owner(fixture.path("logs/\(Self.user)/\(name)")))
            #expect(file.uid == Self.user && file.mode == 0o600, "\(name): \(file)")
        }
        let directory = try #require(owner(fixture.path("logs/\(Self.user)")))
        #expect(directory.uid == Self.user && directory.mode == 0o700)
    }

    @Test("a symbolic link planted where a user's log file goes fails the start, naming the file; its target is untouched",
        .enabled(if: getuid() == 0, "changing identity needs root"))
    func plantedSymbolicLink() throws {
        let fixture = try setUp()
        let directory = try userDirectory(fixture)
        // Writable by anyone: only not following the link keeps it whole.
        let victim = fixture.path("victim")
        try "root's file\n".write(toFile: victim, atomically: false, encoding: .utf8)
        #expect(chmod(victim, 0o666) == 0)
        #expect(symlink(victim, directory + "/2.1.out") == 0)
        let error = #expect(throws: LaunchError.self) { _ = try fixture.launcher.launch(request(fixture, ["echo", "x"], id: 2)) }
        #expect(error?.message == "cannot open log file \(directory)/2.1.out: it is not a regular file of its own")
        #expect(fixture.text("victim") == "root's file\n")
    }

    @Test("a hard link, a file of another owner or a FIFO where a user's log file goes fails the start, each left as it was",
        .enabled(if: getuid() == 0, "changing identity needs root"))
    func plantedFiles() throws {
        let fixture = try setUp()
        let directory = try userDirectory(fixture)
        // The user's own file, linked twice.
        try "kept\n".write(toFile: directory + "/1.1.out.copy", atomically: false, encoding: .utf8)
        #expect(chown(directory + "/1.1.out.copy", Self.user, Self.user) == 0)
        #expect(link(directory + "/1.1.out.copy", directory + "/2.1.out") == 0)
        // Root's file, writable by anyone.
        try "root's\n".write(toFile: directory + "/3.1.out", atomically: false, encoding: .utf8)
        #expect(chmod(directory + "/3.1.out", 0o666) == 0)
        // The user's FIFO with no reader: opening it must neither block nor succeed.
        #expect(mkfifo(directory + "/4.1.out", 0o600) == 0)
        #expect(chown(directory + "/4.1.out", Self.user, Self.user) == 0)
        for id in 2...4 {
            let error = try failingIfBlocked(on: directory + "/4.1.out") {
                #expect(throws: LaunchError.self) { _ = try fixture.launcher.launch(request(fixture, ["echo", "x"], id: id)) }
            }
            #expect(error?.message == "cannot open log file \(directory)/\(id).1.out: it is not a regular file of its own")
        }
        #expect(fixture.text("logs/\(Self.user)/1.1.out.copy") == "kept\n")
        #expect(fixture.text("logs/\(Self.user)/3.1.out") == "root's\n")
        #expect(owner(directory + "/3.1.out")?.uid == 0)
    }

    @Test("a user's log directory whose mode the user changed is made 0700 again before the next job",
        .enabled(if: getuid() == 0, "changing identity needs root"))
    func directoryModeRestored() throws {
        let fixture = try setUp()
        let directory = try userDirectory(fixture)
        #expect(chmod(directory, 0o755) == 0)
        #expect(try fixture.run(request(fixture, ["true"], id: 2)).status == .exited(0))
        #expect(owner(directory)?.mode == 0o700)
    }

    @Test("a log directory removed while the launcher keeps it open is made again, and the new one is used")
    func removedDirectoryIsRemade() throws {
        let fixture = try ExecutionFixture()
        var request = fixture.request(["echo", "one"])
        request.standardOutputPath = fixture.path("logs/1.out")
        request.standardErrorPath = fixture.path("logs/1.err")
        #expect(try fixture.run(request).status == .exited(0))
        try FileManager.default.removeItem(atPath: fixture.path("logs"))
        request.arguments = ["echo", "two"]
        request.standardOutputPath = fixture.path("logs/2.out")
        request.standardErrorPath = fixture.path("logs/2.err")
        #expect(try fixture.run(request).status == .exited(0))
        #expect(fixture.text("logs/2.out") == "two\n")
        #expect(owner(fixture.path("logs"))?.mode == 0o700)
    }
}
