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
