import Foundation
import Glibc
import Testing

/// A job that cannot start says which step of the start failed.
@Suite("Launch errors end to end")
struct LaunchErrorTests {
    @Test("a working directory removed before the job starts fails naming the directory, not the program")
    func vanishedWorkingDirectory() throws {
        let daemon = try TestDaemon()
        let workingDirectory = daemon.directory + "/gone"
        try FileManager.default.createDirectory(atPath: workingDirectory, withIntermediateDirectories: true)
        #expect(try daemon.orchctl(["queue", "add", "q", "--concurrency", "1"]).status == 0)
        #expect(try daemon.orchctl(["pause", "q"]).status == 0)
        let id = try daemon.orchctl(["submit", "--queue", "q", "--", "pwd"], workingDirectory: workingDirectory).line
        try FileManager.default.removeItem(atPath: workingDirectory)
        #expect(try daemon.orchctl(["resume", "q"]).status == 0)
        #expect(try daemon.orchctl(["wait", id]).status == 127)
        let shown = try daemon.orchctl(["show", id, "--json"])
        let job = try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any]
        #expect(job?["result"] as? String == "spawn_failed", "\(shown)")
        #expect(job?["reason"] as? String == "cannot enter working directory \(workingDirectory): No such file or directory", "\(shown)")
    }

    @Test("a program that is not executable fails naming the exec step")
    func notExecutable() throws {
        let daemon = try TestDaemon()
        let script = daemon.directory + "/script"
        #expect(FileManager.default.createFile(atPath: script, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o644]))
        let id = try daemon.orchctl(["submit", "--", script]).line
        #expect(try daemon.orchctl(["wait", id]).status == 127)
        let shown = try daemon.orchctl(["show", id, "--json"])
        let job = try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any]
        #expect(job?["reason"] as? String == "cannot execute \(script): Permission denied", "\(shown)")
    }
}
