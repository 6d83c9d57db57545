import Foundation
@testable import Orchestrator
import OrchestratorAPI
import Testing

/// JobOperation with a cgroup per job: the job is over only when its cgroup is empty.
@Suite("JobOperation in a cgroup")
struct CgroupJobOperationTests {
    static let available: Bool = {
        guard let containment = try? Containment.setUp(mode: .cgroup, stateDirectory: "/orchd-unit-probe-\(getpid())") else { return false }
        containment.removeSubtree()
        return true
    }()

    @Test("a setsid'ed child left by the main process is killed before onFinished, which keeps the main's result",
        .enabled(if: available || ProcessInfo.processInfo.environment["CI"] == "true", "needs a writable cgroup2 subtree"))
    func leftoverInCgroup() throws {
        let fixture = try ExecutionFixture()
        let containment = try Containment.setUp(mode: .cgroup, stateDirectory: fixture.directory)
        defer { containment.removeSubtree() }
        let cgroup = try #require(containment.cgroup(forJob: JobID(rawValue: 1), attempt: 1))
        try #require(mkfifo(fixture.path("ready"), 0o600) == 0)
        // The main process exits only once the escaped child ignores SIGTERM.
        let script = "setsid sh -c 'trap \"\" TERM; echo $$ > \(fixture.path("ready")); exec sleep 300' & "
            + "read pid < \(fixture.path("ready")); echo $pid > \(fixture.path("pid")); exit 5"
        var request = fixture.request(["sh", "-c", script])
        request.cgroup = cgroup
        let recorder = JobRecorder()
        let queue = OperationQueue()
        queue.addOperation(recorder.operation(request, fixture: fixture, teardown: .standard(grace: .milliseconds(100)), containment: containment))
        let process = try recorder.waitForStart()
        #expect(process.cgroup == cgroup)
        #expect(try recorder.waitForFinish() == .failed(exitCode: 5))
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        #expect(!cgroup.isPopulated, "the setsid'ed sleep (ignoring SIGTERM) was killed")
        #expect(!cgroup.exists, "the empty cgroup was removed")
        let escaped = try #require(Int32(fixture.text("pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(ProcessGroup(id: escaped).isGone)
    }

    @Test("a cgroup the job made inside its own is removed with it once empty, whether the job ended alone or was torn down",
        .enabled(if: available || ProcessInfo.processInfo.environment["CI"] == "true", "needs a writable cgroup2 subtree"),
        arguments: [false, true])
    func childCgroupRemoved(leavesProcess: Bool) throws {
        let fixture = try ExecutionFixture()
        let containment = try Containment.setUp(mode: .cgroup, stateDirectory: fixture.directory)
        defer { containment.removeSubtree() }
        let cgroup = try #require(containment.cgroup(forJob: JobID(rawValue: 1), attempt: 1))
        // The job makes cgroup `sub` in its own (its cgroup is its first line in /proc/self/cgroup)
        // and, when asked, moves a sleep into it that outlives the main process.
        let mount = try #require(Containment.cgroup2Mount())
        let leftover = leavesProcess ? "sleep 300 & echo $! > \"$cg/sub/cgroup.procs\"; " : ""
        let script = "cg=\(mount)$(sed -n 's/^0:://p' /proc/self/cgroup); mkdir \"$cg/sub\" && \(leftover)exit 7"
        var request = fixture.request(["sh", "-c", script])
        request.cgroup = cgroup
        let recorder = JobRecorder()
        let queue = OperationQueue()
        queue.addOperation(recorder.operation(request, fixture: fixture, teardown: .standard(grace: .milliseconds(100)), containment: containment))
        _ = try recorder.waitForStart()
        #expect(try recorder.waitForFinish() == .failed(exitCode: 7))
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        #expect(!cgroup.child("sub").exists, "the job's own cgroup was removed")
        #expect(!cgroup.exists, "the job's cgroup was removed")
    }
}
