import Foundation
import Glibc
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Crash recovery")
struct RecoveryTests {
    private func makeScheduler(_ directory: TemporaryDirectory) throws -> Scheduler {
        let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
        return Scheduler(store: store, configuration: .init(
            concurrency: 1, stateDirectory: directory.path, logDirectory: directory.path, teardownGrace: .seconds(1)))
    }

    @Test("a job claimed but whose pid was never recorded is found by its environment and killed, not run again")
    func unrecordedProcessIsKilled() async throws {
        let directory = try TemporaryDirectory()
        let id: JobID
        do {
            // The previous daemon: it claimed the job, spawned it, and died before recording the pid.
            let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
            let job = try store.insert(
                JobSpec(command: .argv(["sleep", "300"]), cwd: "/", environment: [:]), submitterUid: 0, at: Date())
            id = job.id
            try store.claim(id, at: Date())
        }
        let process = try ProcessLauncher().launch(LaunchRequest(
            arguments: ["sleep", "300"], workingDirectory: "/",
            environment: ["ORCHD_JOB_ID": id.description, "ORCHD_STATE_DIR": directory.path, "PATH": "/usr/bin:/bin"],
            standardOutputPath: "/dev/null", standardErrorPath: "/dev/null"))
        let exited = DispatchSemaphore(value: 0)
        let reaper = ChildReaper()
        reaper.watch(process, on: DispatchQueue(label: "test.reaper")) { _ in exited.signal() }

        let scheduler = try makeScheduler(directory)
        #expect(try await scheduler.start() == 1)
        #expect(exited.wait(timeout: .now() + 10) == .success, "the orphaned process was killed")
        withExtendedLifetime(reaper) {}

        #expect(try await scheduler.job(id).job.state.result == .interrupted)
    }

    @Test("an attempt spawned but killed with orchd before its pid was recorded gets its started event (its log file shows it started); one only claimed does not")
    func startedEventOfUnrecordedAttempt() async throws {
        let directory = try TemporaryDirectory()
        let (spawned, claimed): (JobID, JobID)
        do {
            // The previous daemon: it claimed both, spawned the first (whose child created its
            // log file), and died before recording either pid.
            let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
            let spec = JobSpec(command: .argv(["true"]), cwd: "/", environment: [:])
            spawned = try store.insert(spec, submitterUid: 0, at: Date()).id
            claimed = try store.insert(spec, submitterUid: 0, at: Date()).id
            try store.claim(spawned, at: Date())
            try store.claim(claimed, at: Date())
        }
        try FileManager.default.createDirectory(atPath: directory.file("0"), withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: directory.file("0/\(spawned).1.out"), contents: Data()))
        let scheduler = try makeScheduler(directory)
        #expect(try await scheduler.start() == 2)
        let events = try EventLog(database: try Database(path: directory.file("orchd.db"))).events(after: 0, limit: 100)
        func kinds(_ id: JobID) -> [String] { events.filter { $0.jobId == id }.map(\.kind.rawValue) }
        #expect(kinds(spawned) == ["submitted", "started", "finished"], "\(events)")
        #expect(kinds(claimed) == ["submitted", "finished"], "\(events)")
        #expect(events.first { $0.jobId == spawned && $0.kind.rawValue == "started" }?.attempt == 1)
    }

    @Test("a job recovered as interrupted fails the jobs that wait for it, though recovery runs before the counts are loaded")
    func recoveredEndFailsDependents() async throws {
        let directory = try TemporaryDirectory()
        let dependency: JobID
        let dependent: JobID
        do {
            // The previous daemon: it claimed the first job and died; the second waits for it.
            let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
            dependency = try store.insert(
                JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), submitterUid: 0, at: Date()).id
            var spec = JobSpec(command: .argv(["true"]), cwd: "/", environment: [:])
            spec.after = [dependency]
            dependent = try store.insert([(spec: spec, state: .waiting)], submitterUid: 0, at: Date())[0].id
            try store.claim(dependency, at: Date())
        }
        let scheduler = try makeScheduler(directory)
        #expect(try await scheduler.start() == 1)
        #expect(try await scheduler.job(dependency).job.state.result == .interrupted)
        let failed = try await scheduler.job(dependent).job.state.result
        #expect(failed == .dependencyFailed(dependency))
        #expect(await scheduler.jobCounts.waiting == 0)
    }

    @Test("waiting jobs whose dependencies ended while their settling was refused are queued or failed at the next start")
    func unsettledDependentsAtStart() async throws {
        let directory = try TemporaryDirectory()
        let succeeded: JobID
        let failed: JobID
        let queued: JobID
        let failing: JobID
        let stillWaiting: JobID
        do {
            // The previous daemon recorded both ends, but not what they meant for the jobs
            // waiting on them (the store refused that write, then the daemon stopped).
            let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
            let plain = JobSpec(command: .argv(["true"]), cwd: "/", environment: [:])
            succeeded = try store.insert(plain, submitterUid: 0, at: Date()).id
            failed = try store.insert(plain, submitterUid: 0, at: Date()).id
            var later = plain
            later.notBefore = Date().addingTimeInterval(3600)
            let open = try store.insert([(spec: later, state: .waiting)], submitterUid: 0, at: Date())[0].id
            try store.claim(succeeded, at: Date())
            try store.markFinished(succeeded, result: .succeeded, at: Date())
            try store.claim(failed, at: Date())
            try store.markFinished(failed, result: .failed(exitCode: 1), at: Date())
            func waiting(after: [JobID]) throws -> JobID {
                var spec = plain
                spec.after = after
                return try store.insert([(spec: spec, state: .waiting)], submitterUid: 0, at: Date())[0].id
            }
            queued = try waiting(after: [succeeded])
            failing = try waiting(after: [succeeded, failed])
            stillWaiting = try waiting(after: [succeeded, open])
        }
        let scheduler = try makeScheduler(directory)
        _ = try await scheduler.start()
        // Queued by the start (and perhaps started already), no longer waiting.
        #expect(try await scheduler.job(queued).job.state != .waiting)
        #expect(try await scheduler.job(failing).job.state.result == .dependencyFailed(failed))
        #expect(try await scheduler.job(stillWaiting).job.state == .waiting)
    }

    @Test("another daemon's job with the same ID is left alone")
    func otherStateDirectoryUntouched() throws {
        let directory = try TemporaryDirectory()
        let other = try TemporaryDirectory()
        let store = try JobStore(database: try Database(path: directory.file("orchd.db")))
        let job = try store.insert(JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), submitterUid: 0, at: Date())
        try store.claim(job.id, at: Date())
        let process = try ProcessLauncher().launch(LaunchRequest(
            arguments: ["sleep", "300"], workingDirectory: "/",
            environment: ["ORCHD_JOB_ID": job.id.description, "ORCHD_STATE_DIR": other.path, "PATH": "/usr/bin:/bin"],
            standardOutputPath: "/dev/null", standardErrorPath: "/dev/null"))
        defer { kill(-process.pid, SIGKILL) }
        process.waitUntilExecuted("sleep")
        #expect(ProcessIdentity.processGroups(ofJobs: [job.id.rawValue], sparing: [], orHooksOf: directory.path).isEmpty)
        #expect(ProcessIdentity.processGroups(ofJobs: [job.id.rawValue], sparing: [], orHooksOf: other.path) == [process.pid])
    }

    @Test("recovery's look finds a process of any job of this daemon, also one not recorded running, but not a Slurm job's")
    func leftoversOfUnrecordedJobs() throws {
        let directory = try TemporaryDirectory()
        func start(job id: Int64, slurm: Bool = false) throws -> LaunchedProcess {
            var environment = ["ORCHD_JOB_ID": "\(id)", "ORCHD_STATE_DIR": directory.path, "PATH": "/usr/bin:/bin"]
            if slurm { environment["SLURM_JOB_ID"] = "41" }
            return try ProcessLauncher().launch(LaunchRequest(
                arguments: ["sleep", "300"], workingDirectory: "/", environment: environment,
                standardOutputPath: "/dev/null", standardErrorPath: "/dev/null"))
        }
        let unrecorded = try start(job: 5)
        let inSlurm = try start(job: 6, slurm: true)
        let reattached = try start(job: 7)
        let recordedFromAllocation = try start(job: 8, slurm: true)
        defer { for process in [unrecorded, inSlurm, reattached, recordedFromAllocation] { kill(-process.pid, SIGKILL) } }
        for process in [unrecorded, inSlurm, reattached, recordedFromAllocation] { process.waitUntilExecuted("sleep") }
        let found = ProcessIdentity.processGroups(ofJobs: [8], sparing: [7], orHooksOf: directory.path)
        #expect(found == [unrecorded.pid, recordedFromAllocation.pid].sorted(), "not Slurm's nor a reattached attempt's")
    }
}
