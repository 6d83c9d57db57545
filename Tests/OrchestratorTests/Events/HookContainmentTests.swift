import Foundation
import Glibc
import OrchestratorAPI
import Testing

@testable import Orchestrator

/// Hooks are contained like jobs: their time limit tears down what they started, and in the
/// process-group fallback their processes are told from the job's by `ORCHD_HOOK_ID`.
@Suite("Hook containment")
struct HookContainmentTests {
    @Test("a hook over its time limit ends timed_out, and the child it setsid'ed is torn down with it")
    func timeLimitTearsDownEscapedChild() async throws {
        let directory = try TemporaryDirectory()
        let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
        let scheduler = Scheduler(store: store, configuration: .init(
            concurrency: 1, stateDirectory: directory.path, logDirectory: directory.path, teardownGrace: .seconds(1)))
        let containment = Containment.processGroupOnly(stateDirectory: directory.path)
        let runner = HookRunner(scheduler: scheduler, containment: containment, timeout: .seconds(1))
        let pipe = directory.file("pipe")
        let marker = directory.file("escaped")
        try #require(mkfifo(pipe, 0o600) == 0)
        // The child leaves the hook's process group, hands its pid over the named pipe and
        // sleeps; the hook records it and sleeps past its limit.
        let command = "setsid sh -c 'echo $$ > \(pipe); exec sleep 900' & read pid < \(pipe); echo $pid > \(marker); sleep 900"
        let result = await withCheckedContinuation { (done: CheckedContinuation<JobResult, Never>) in
            runner.run(command, environment: ["PATH": "/usr/bin:/bin", "ORCHD_JOB_ID": "7"], label: "test hook") { done.resume(returning: $0) }
        }
        #expect(result == .timedOut)
        let hook = ProcessIdentity.Job(id: 1, stateDirectory: directory.path, isHook: true)
        #expect(ProcessIdentity.processes(of: hook).isEmpty, "nothing of the hook runs after its end")
        if let escaped = (try? String(contentsOfFile: marker, encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
            #expect(ProcessGroup(id: escaped).isGone, "the setsid'ed child was torn down")
        }
        withExtendedLifetime(scheduler) {}
    }

    @Test("a hook's process carries the job's ORCHD_JOB_ID but counts as the hook's, not the job's")
    func hookIsNotTheJobs() throws {
        let directory = try TemporaryDirectory()
        let process = try ProcessLauncher().launch(LaunchRequest(
            arguments: ["sleep", "300"], workingDirectory: "/",
            environment: ["ORCHD_JOB_ID": "7", "ORCHD_HOOK_ID": "3", "ORCHD_STATE_DIR": directory.path, "PATH": "/usr/bin:/bin"],
            standardOutputPath: "/dev/null", standardErrorPath: "/dev/null"))
        let exited = DispatchSemaphore(value: 0)
        let reaper = ChildReaper()
        reaper.watch(process, on: DispatchQueue(label: "test.reaper")) { _ in exited.signal() }
        defer {
            kill(process.pid, SIGKILL)
            exited.wait()
        }
        process.waitUntilExecuted("sleep")
        #expect(ProcessIdentity.processes(of: .init(id: 7, stateDirectory: directory.path)).isEmpty)
        #expect(ProcessIdentity.processes(of: .init(id: 3, stateDirectory: directory.path, isHook: true)) == [process.pid])
        // Recovery's look: every hook of the daemon, whatever the jobs asked for.
        #expect(ProcessIdentity.processGroups(ofJobs: [], sparing: [], orHooksOf: directory.path) == [process.pid])
        #expect(ProcessIdentity.processGroups(ofJobs: [7], sparing: [], orHooksOf: directory.path + "/other").isEmpty)
    }
}
