import CPosix
import CommandLineParsing
import Foundation
@testable import Orchestrator
import OrchestratorAPI
import Testing

@Suite("Containment set-up")
struct ContainmentSetupTests {
    @Test("--containment takes auto, cgroup or process-group and defaults to auto")
    func parsesMode() throws {
        for mode in Containment.Mode.allCases {
            guard case .run(let parsed) = try DaemonConfiguration.parse(["--containment", mode.rawValue], environment: [:], uid: 0)
            else { Issue.record("expected run"); return }
            #expect(parsed.containment == mode)
        }
        guard case .run(let parsed) = try DaemonConfiguration.parse([], environment: [:], uid: 0)
        else { Issue.record("expected run"); return }
        #expect(parsed.containment == .auto)
        #expect(DaemonConfiguration.usage.contains("[--containment <mode>]"))
    }

    @Test("a bad --containment value is a usage error naming the choices")
    func badMode() {
        let error = #expect(throws: CommandLineError.self) {
            try DaemonConfiguration.parse(["--containment", "jail"], environment: [:], uid: 0)
        }
        #expect(error?.message == "invalid value for option '--containment': 'jail' is not one of auto, cgroup, process-group")
    }

    @Test("--containment process-group is the fallback whatever the machine offers")
    func forcedFallback() throws {
        let containment = try Containment.setUp(mode: .processGroup, stateDirectory: "/var/lib/x")
        #expect(containment.name == "process-group")
        #expect(containment.subtree == nil && containment.watcher == nil)
        #expect(containment.cgroup(forJob: JobID(rawValue: 7), attempt: 1) == nil)
        #expect(containment.identity(ofJob: JobID(rawValue: 7)) == ProcessIdentity.Job(id: 7, stateDirectory: "/var/lib/x"))
        #expect(containment.summary == "process-group (--containment process-group)")
    }

    @Test("the subtree name is stable per state directory and differs between them")
    func subtreeNames() {
        let a = Containment.subtreeName(stateDirectory: "/var/lib/orchd")
        #expect(a == Containment.subtreeName(stateDirectory: "/var/lib/orchd"))
        #expect(a != Containment.subtreeName(stateDirectory: "/var/lib/orchd2"))
        #expect(a.hasPrefix("orchd-") && a.count == "orchd-".count + 16)
        #expect(Containment.groupName(job: JobID(rawValue: 42), attempt: 3) == "job-42-3")
    }

    @Test("auto mode with cgroups available sets up a cgroup subtree per state directory, else says why not")
    func autoMode() throws {
        let stateDirectory = NSTemporaryDirectory() + "/orchd-containment-unit-\(UUID().uuidString)"
        let containment = try Containment.setUp(mode: .auto, stateDirectory: stateDirectory)
        defer { containment.removeSubtree() }
        if let subtree = containment.subtree {
            #expect(containment.name == "cgroup")
            #expect(subtree.path == Containment.subtreePath(stateDirectory: stateDirectory))
            #expect(subtree.exists)
            #expect(containment.cgroup(forJob: JobID(rawValue: 5), attempt: 2)?.path == subtree.path + "/job-5-2")
            #expect(containment.identity(ofJob: JobID(rawValue: 5)) == nil)
        } else {
            #expect(containment.name == "process-group")
            #expect(containment.summary.hasPrefix("process-group ("), "the reason is given: \(containment.summary)")
        }
    }
}

@Suite("The record of a daemon's job cgroup subtree")
struct SubtreeRecordTests {
    private func makeStateDirectory() throws -> String {
        var template = Array("/tmp/orchd-record-XXXXXX".utf8CString)
        return try #require(mkdtemp(&template).map { String(cString: $0) })
    }

    private func writeRecord(_ text: String, in stateDirectory: String) throws {
        try text.write(toFile: stateDirectory + "/" + Containment.subtreeRecordName, atomically: true, encoding: .utf8)
    }

    @Test("only a subtree's name in the cgroup2 mount is taken from the record, so that no other cgroup is ever cleared",
        .enabled(if: Containment.cgroup2Mount() != nil, "needs a cgroup2 mount"))
    func recordIsValidated() throws {
        let stateDirectory = try makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        let mount = try #require(Containment.cgroup2Mount())
        let name = Containment.subtreeName(stateDirectory: "/var/lib/orchd")
        let good = mount + "/user.slice/session-3.scope/" + name
        try writeRecord(good + "\n", in: stateDirectory)
        #expect(Containment.recordedSubtree(stateDirectory: stateDirectory) == good)
        for bad in [
            good,  // no newline: cut short
            "/tmp/" + name + "\n", mount + "/" + name + "/..\n", mount + "/x/../" + name + "\n",
            mount + "//" + name + "\n", mount + "/system.slice/orchd.service\n", mount + "/orchd-123\n",
            mount + "/orchd-zzzzzzzzzzzzzzzz\n", "\n", "",
        ] {
            try writeRecord(bad, in: stateDirectory)
            #expect(Containment.recordedSubtree(stateDirectory: stateDirectory) == nil, "\(bad.debugDescription)")
        }
        try FileManager.default.removeItem(atPath: stateDirectory + "/" + Containment.subtreeRecordName)
        #expect(Containment.recordedSubtree(stateDirectory: stateDirectory) == nil)
    }

    @Test("a daemon with a subtree of its own records it; without one, it removes a record whose subtree is gone")
    func recordFollowsTheSubtree() throws {
        let stateDirectory = try makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        let record = stateDirectory + "/" + Containment.subtreeRecordName
        let containment = try Containment.setUp(mode: .auto, stateDirectory: stateDirectory)
        defer { containment.removeSubtree() }
        #expect(containment.recordSubtree() == nil)
        if let subtree = containment.subtree {
            #expect(try String(contentsOfFile: record, encoding: .utf8) == subtree.path + "\n")
            #expect(Containment.recordedSubtree(stateDirectory: stateDirectory) == subtree.path)
            #expect(containment.clearEarlierSubtrees().isEmpty, "its own subtree is never an earlier one")
            #expect(subtree.exists)
        } else {
            #expect(!FileManager.default.fileExists(atPath: record))
        }
        let fallback = Containment.processGroupOnly(stateDirectory: stateDirectory)
        if let mount = Containment.cgroup2Mount() {
            try writeRecord(mount + "/" + Containment.subtreeName(stateDirectory: stateDirectory + "/gone") + "\n", in: stateDirectory)
        }
        #expect(fallback.recordSubtree() == nil)
        #expect(!FileManager.default.fileExists(atPath: record), "a record of a subtree that is gone is removed")
    }

    @Test("the subtree an earlier daemon recorded is cleared: its job groups' processes killed, the groups and the subtree removed",
        .enabled(if: CgroupJobOperationTests.available || ProcessInfo.processInfo.environment["CI"] == "true", "needs a writable cgroup2 subtree"))
    func earlierSubtreeIsCleared() throws {
        let stateDirectory = try makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        let containment = try Containment.setUp(mode: .cgroup, stateDirectory: stateDirectory)
        defer { containment.removeSubtree() }
        let own = try #require(containment.subtree)
        // Where a daemon started from another cgroup kept its job groups: a sibling subtree.
        let parent = String(own.path.dropLast(own.name.count + 1))
        let earlier = Cgroup(path: parent + "/" + Containment.subtreeName(stateDirectory: stateDirectory + "/elsewhere"))
        let group = earlier.child("job-7-1")
        #expect(earlier.create() == 0 && group.create() == 0)
        defer { group.remove(); earlier.remove() }
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["300"]
        try sleeper.run()
        defer { if sleeper.isRunning { kill(sleeper.processIdentifier, SIGKILL) } }
        try #require(group.adopt(sleeper.processIdentifier) == 0)
        try writeRecord(earlier.path + "\n", in: stateDirectory)
        // Unmarked, or marked for another directory (a copy's record names the original's):
        // left alone.
        #expect(containment.clearEarlierSubtrees().isEmpty && earlier.exists)
        let otherMark = Array("1:1".utf8)
        try #require(cposix_setxattr(earlier.path, Containment.markAttribute, otherMark, UInt(otherMark.count)) == 0)
        #expect(containment.clearEarlierSubtrees().isEmpty && earlier.exists)
        let mark = Array(try #require(Containment.stateDirectoryMark(stateDirectory)).utf8)
        try #require(cposix_setxattr(earlier.path, Containment.markAttribute, mark, UInt(mark.count)) == 0)
        let cleared = containment.clearEarlierSubtrees()
        #expect(cleared == [Containment.EarlierSubtree(path: earlier.path, killedGroups: ["job-7-1"], removed: true)])
        sleeper.waitUntilExit()
        #expect(sleeper.terminationReason == .uncaughtSignal && sleeper.terminationStatus == SIGKILL)
        #expect(!earlier.exists)
        #expect(own.exists, "its own subtree stays")
        #expect(containment.markSubtree() == nil)
        #expect(Containment.mark(ofSubtree: own.path) == Containment.stateDirectoryMark(stateDirectory))
        #expect(containment.recordSubtree() == nil)
        #expect(Containment.recordedSubtree(stateDirectory: stateDirectory) == own.path)
    }

    @Test("a record that cannot be written says why",
        .enabled(if: CgroupJobOperationTests.available || ProcessInfo.processInfo.environment["CI"] == "true", "needs a writable cgroup2 subtree"))
    func unwritableRecord() throws {
        let containment = try Containment.setUp(mode: .cgroup, stateDirectory: "/proc/orchd-no-such-directory")
        defer { containment.removeSubtree() }
        let failure = try #require(containment.recordSubtree())
        #expect(failure.hasPrefix("cannot create /proc/orchd-no-such-directory/cgroup-subtree.new: "), "\(failure)")
    }
}
