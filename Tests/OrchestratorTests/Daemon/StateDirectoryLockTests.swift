import Foundation
import Glibc
import Testing
import TestWaitLimits

@testable import Orchestrator

@Suite("State directory lock")
struct StateDirectoryLockTests {
    @Test("a lock held after its daemon is gone (a child of it between spawn and exec) is waited for; one of a live daemon is refused without waiting")
    func departedHolder() throws {
        let directory = try TemporaryDirectory()
        let state = directory.file("state")
        // Made, taken and released: the directory and the file exist.
        let path = try StateDirectoryLock(stateDirectory: state).path

        // The file records a pid that has exited, and something else holds the lock for a
        // moment, as the dead daemon's spawning child holds its copy until exec.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let holder = try hold(path, seconds: "0.5", recording: gone.processIdentifier)
        var second: StateDirectoryLock? = try StateDirectoryLock(stateDirectory: state)
        #expect(holder.waitUntilExit(atMost: 600), "flock(1) still held the lock after 600 s")
        #expect(second != nil)
        second = nil

        // Recorded by a live process (this one): refused without waiting, although the holder
        // lets go well within the wait a departed daemon's lock gets.
        let another = try hold(path, seconds: "1", recording: getpid())
        defer { #expect(another.waitUntilExit(atMost: 600), "flock(1) still held the lock after 600 s") }
        #expect(throws: StateDirectoryLockError.self) { try StateDirectoryLock(stateDirectory: state) }
    }

    @Test("with orchd.lock removed while a daemon holds it, a second one is still refused: the directory itself is locked")
    func lockFileRemoved() throws {
        let directory = try TemporaryDirectory()
        let state = directory.file("state")
        var first: StateDirectoryLock? = try StateDirectoryLock(stateDirectory: state)
        #expect(unlink(state + "/orchd.lock") == 0)
        let error = #expect(throws: StateDirectoryLockError.self) { try StateDirectoryLock(stateDirectory: state) }
        #expect(error?.description == "another orchd is already running with this state directory (lock \(state) is held)")
        #expect(first != nil)
        first = nil
        // Once the first lets go, a new daemon takes both.
        _ = try StateDirectoryLock(stateDirectory: state)
    }

    @Test("a lock file that is a symbolic link is refused, and what it points to is left as it was")
    func lockFileLink() throws {
        let directory = try TemporaryDirectory()
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let victim = directory.file("victim")
        try "keep\n".write(toFile: victim, atomically: true, encoding: .utf8)
        try #require(symlink(victim, state + "/orchd.lock") == 0)
        let error = #expect(throws: StateDirectoryLockError.self) { try StateDirectoryLock(stateDirectory: state) }
        #expect(error?.description.hasPrefix("\(state)/orchd.lock is not a regular file") == true, "\(String(describing: error))")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep\n")
    }

    @Test("a state directory that belongs to another user is refused before anything is written in it",
        .enabled(if: geteuid() == 0, "needs root to give the directory away"))
    func otherUsersDirectory() throws {
        let directory = try TemporaryDirectory()
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try #require(chown(state, 65534, 65534) == 0)
        let error = #expect(throws: Daemon.StartupFailure.self) { try Daemon.resolveStateDirectory(state) }
        #expect(error?.message.contains("belongs to uid 65534, not to orchd's user (uid 0)") == true, "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).isEmpty)
    }

    /// Writes `pid` into the lock file, and has flock(1) hold the lock for `seconds`; returns
    /// once it holds it.
    private func hold(_ path: String, seconds: String, recording pid: Int32) throws -> Process {
        try "\(pid)\n".write(toFile: path, atomically: false, encoding: .utf8)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["--exclusive", path, "sleep", seconds]
        try holder.run()
        let probe = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(probe) }
        // flock(1) tells no one it holds the lock: asked every millisecond, for 600 s at most.
        let deadline = ContinuousClock.now + .seconds(600)
        while flock(probe, LOCK_EX | LOCK_NB) == 0 {
            flock(probe, LOCK_UN)
            // flock(1) that ended without taking it (it failed) would leave this loop for ever.
            try #require(holder.isRunning, "flock(1) ended without holding \(path): status \(holder.terminationStatus)")
            let late = ContinuousClock.now >= deadline
            if late { kill(holder.processIdentifier, SIGKILL) }
            try #require(!late, "flock(1) did not take \(path) within 600 s")
            usleep(1_000)
        }
        return holder
    }
}
