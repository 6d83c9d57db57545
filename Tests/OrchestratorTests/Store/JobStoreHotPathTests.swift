import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("JobStore hot path")
struct JobStoreHotPathTests {
    let directory: TemporaryDirectory
    let store: JobStore
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    init() throws {
        directory = try TemporaryDirectory()
        store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
    }

    func spec(priority: Int = 0, queue: QueueName = .default) -> JobSpec {
        JobSpec(command: .argv(["true"]), cwd: "/tmp", environment: [:], queue: queue, priority: priority)
    }

    @Test("claimNext claims in start order up to the limit, skips excluded jobs and other queues, and returns the rows as running")
    func claimsInOrder() throws {
        let other = try #require(QueueName(rawValue: "other"))
        let jobs = try store.insert(
            [spec(priority: 0), spec(priority: 5), spec(priority: 0), spec(priority: 5), spec(queue: other)],
            submitterUid: 0, at: now)
        let claimed = try store.claimNext(in: .default, excluding: [jobs[1].id], limit: 2, at: now) { _ in true }
        #expect(claimed.map(\.id) == [jobs[3].id, jobs[0].id])
        #expect(claimed.allSatisfy { $0.state == .running && $0.attempt == 1 })
        #expect(try store.job(jobs[3].id)?.state == .running)
        #expect(try store.job(jobs[1].id)?.state == .queued, "excluded")
        #expect(try store.job(jobs[2].id)?.state == .queued, "beyond the limit")
        #expect(try store.job(jobs[4].id)?.state == .queued, "another queue")
    }

    @Test("claimShared reads each user's next jobs past the excluded ones, so an excluded job costs no candidate")
    func claimSharedSkipsExcluded() throws {
        let first = try store.insert([spec(), spec(), spec()], submitterUid: 1, at: now)
        let second = try store.insert([spec(), spec()], submitterUid: 2, at: now)
        var offered: [JobStore.OwnerCandidates] = []
        let claimed = try store.claimShared(
            in: .default, excluding: [first[0].id, second[1].id, JobID(rawValue: 999)], perOwner: 2, at: now,
            choose: { candidates in
                offered = candidates
                return candidates.flatMap(\.jobs)
            }, admit: { _ in true })
        #expect(offered == [
            JobStore.OwnerCandidates(owner: 1, jobs: [first[1].id, first[2].id]),
            JobStore.OwnerCandidates(owner: 2, jobs: [second[0].id]),
        ])
        #expect(claimed.map(\.id) == [first[1].id, first[2].id, second[0].id])
        #expect(try store.job(first[0].id)?.state == .queued, "excluded")
    }

    @Test("claimNext claims only what admit lets through, and nothing with a limit of zero")
    func admitDecides() throws {
        let jobs = try store.insert([spec(), spec(), spec()], submitterUid: 0, at: now)
        #expect(try store.claimNext(in: .default, excluding: [], limit: 0, at: now) { _ in true }.isEmpty)
        let claimed = try store.claimNext(in: .default, excluding: [], limit: 3, at: now) { $0 != jobs[1].id }
        #expect(claimed.map(\.id) == [jobs[0].id, jobs[2].id])
        #expect(try store.job(jobs[1].id)?.state == .queued)
        #expect(try store.countsByQueue()[.default]?.running == 2)
    }

    @Test("claimNext's candidates come from the partial index jobs_runnable: no table scan, no sort")
    func candidatesUseIndex() throws {
        let statement = try store.database.makeStatement("EXPLAIN QUERY PLAN " + JobStore.claimCandidatesSQL)
        try statement.bind([.text("default"), 10])
        var details: [String] = []
        while try statement.step() { details.append(statement.string(at: 3) ?? "") }
        #expect(details.contains { $0.hasPrefix("SEARCH jobs USING") && $0.contains("jobs_runnable") }, "\(details)")
        #expect(!details.contains { $0.hasPrefix("SCAN jobs") }, "\(details)")
        #expect(!details.contains { $0.contains("TEMP B-TREE") }, "\(details)")
    }

    @Test("recordProcessOnly records the pid of a running job and refuses a job that is not running or is gone")
    func recordProcessOnly() throws {
        let jobs = try store.insert([spec(), spec()], submitterUid: 0, at: now)
        let claimed = try store.claimNext(in: .default, excluding: [], limit: 1, at: now) { _ in true }
        #expect(claimed.map(\.id) == [jobs[0].id])
        try store.recordProcessOnly(jobs[0].id, pid: 4242, processStartTicks: 7, bootID: "boot")
        #expect(try store.job(jobs[0].id)?.pid == 4242)
        let record = try #require(try store.runningJobs().first { $0.job.id == jobs[0].id })
        #expect(record.processStartTicks == 7 && record.bootID == "boot")
        #expect(throws: JobStoreError.invalidTransition(jobs[1].id, from: "queued", to: "running")) {
            try store.recordProcessOnly(jobs[1].id, pid: 1, processStartTicks: 1, bootID: "boot")
        }
        #expect(throws: JobStoreError.noSuchJob(JobID(rawValue: 99))) {
            try store.recordProcessOnly(JobID(rawValue: 99), pid: 1, processStartTicks: 1, bootID: "boot")
        }
    }

    @Test("recordReaped writes processes and final ends in one transaction, as markFinished would, and skips a process whose job ended")
    func recordReapedMatchesMarkFinished() throws {
        let jobs = try store.insert([spec(), spec(), spec(), spec()], submitterUid: 0, at: now)
        _ = try store.claimNext(in: .default, excluding: [], limit: 4, at: now) { _ in true }
        let end = now.addingTimeInterval(1.234_567_8)
        try store.recordReaped(
            processes: [
                JobStore.ProcessRecord(id: jobs[0].id, pid: 4242, processStartTicks: 7, bootID: "boot"),
                JobStore.ProcessRecord(id: jobs[3].id, pid: 1, processStartTicks: 1, bootID: "boot"),
            ],
            ends: [
                JobStore.RunningEnd(id: jobs[1].id, result: .failed(exitCode: 3), at: end),
                JobStore.RunningEnd(id: jobs[2].id, result: .succeeded, at: end),
            ])
        try store.markFinished(jobs[3].id, result: .failed(exitCode: 3), at: end)
        #expect(try store.job(jobs[0].id)?.pid == 4242)
        let batched = try #require(try store.job(jobs[1].id))
        let single = try #require(try store.job(jobs[3].id))
        #expect(batched.state == .finished(.failed(exitCode: 3)))
        #expect(batched.finishedAt == single.finishedAt && batched.pid == nil)
        #expect(try store.attempts(of: jobs[1].id).map(\.result) == [.failed(exitCode: 3)])
        #expect(try store.attempts(of: jobs[1].id).map(\.finishedAt) == (try store.attempts(of: jobs[3].id)).map(\.finishedAt))
        #expect(try store.job(jobs[2].id)?.state == .finished(.succeeded))
        #expect(try store.countsByQueue()[.default]?.finished == 3)
    }

    @Test("recordReaped writes nothing when one ending job is not running")
    func recordReapedAllOrNothing() throws {
        let jobs = try store.insert([spec(), spec()], submitterUid: 0, at: now)
        _ = try store.claimNext(in: .default, excluding: [], limit: 1, at: now) { _ in true }
        #expect(throws: JobStoreError.invalidTransition(jobs[1].id, from: "queued", to: "finished")) {
            try store.recordReaped(
                processes: [JobStore.ProcessRecord(id: jobs[0].id, pid: 4242, processStartTicks: 7, bootID: "boot")],
                ends: [
                    JobStore.RunningEnd(id: jobs[0].id, result: .succeeded, at: now),
                    JobStore.RunningEnd(id: jobs[1].id, result: .succeeded, at: now),
                ])
        }
        #expect(try store.job(jobs[0].id)?.state == .running)
        #expect(try store.job(jobs[0].id)?.pid == nil)
        #expect(try store.attempts(of: jobs[0].id).isEmpty)
    }

    /// The kinds of job `id`'s events, in order.
    private func eventKinds(_ id: JobID) throws -> [String] {
        let statement = try store.database.makeStatement("SELECT kind FROM events WHERE job_id = \(id.rawValue) ORDER BY seq")
        var kinds: [String] = []
        while try statement.step() { kinds.append(statement.string(at: 0) ?? "") }
        return kinds
    }

    @Test("an attempt's started event is written with its process, not at its claim, and a claim given back records no event")
    func startedWhenTheProcessStarts() throws {
        let jobs = try store.insert([spec(), spec(), spec()], submitterUid: 0, at: now)
        _ = try store.claimNext(in: .default, excluding: [], limit: 3, at: now) { _ in true }
        #expect(try eventKinds(jobs[0].id) == ["submitted"])
        _ = try store.releaseClaim(jobs[2].id)
        #expect(try eventKinds(jobs[2].id) == ["submitted"], "a launch sent back started nothing")
        let spawned = now.addingTimeInterval(0.5)
        try store.recordReaped(
            processes: [
                JobStore.ProcessRecord(id: jobs[0].id, pid: 4242, processStartTicks: 7, bootID: "boot"),
                JobStore.ProcessRecord(id: jobs[1].id, pid: 4243, processStartTicks: 8, bootID: "boot"),
                // Given back meanwhile: no event.
                JobStore.ProcessRecord(id: jobs[2].id, pid: 4244, processStartTicks: 9, bootID: "boot"),
            ],
            ends: [JobStore.RunningEnd(id: jobs[1].id, result: .succeeded, at: spawned.addingTimeInterval(0.1))])
        #expect(try eventKinds(jobs[0].id) == ["submitted", "started"])
        #expect(try eventKinds(jobs[1].id) == ["submitted", "started", "finished"], "the start of a job ending in the same write comes first")
        #expect(try eventKinds(jobs[2].id) == ["submitted"])
        let statement = try store.database.makeStatement(
            "SELECT at, state, previous_state, attempt FROM events WHERE job_id = \(jobs[0].id.rawValue) AND kind = 'started'")
        #expect(try statement.step())
        #expect(statement.int64(at: 0) == Timestamp.microseconds(now), "dated at the claim, as show's startedAt")
        #expect(statement.string(at: 1) == "running" && statement.string(at: 2) == "queued" && statement.int64(at: 3) == 1)
        statement.reset()
    }

    @Test("a Slurm attempt has started once its first Slurm job ID is recorded; the same ID recorded again at a re-attach adds nothing")
    func startedWhenSlurmTakesTheJob() throws {
        let jobs = try store.insert([spec()], submitterUid: 0, at: now)
        _ = try store.claimNext(in: .default, excluding: [], limit: 1, at: now) { _ in true }
        try store.recordSlurmSubmitting(jobs[0].id)
        #expect(try eventKinds(jobs[0].id) == ["submitted"])
        try store.recordSlurmJob(jobs[0].id, slurmJobID: "41")
        try store.recordSlurmJob(jobs[0].id, slurmJobID: "41")
        #expect(try eventKinds(jobs[0].id) == ["submitted", "started"])
    }
}
