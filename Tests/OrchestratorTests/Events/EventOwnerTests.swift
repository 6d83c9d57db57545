import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Events carry their job's owner")
struct EventOwnerTests {
    private let event = Event(seq: 3, at: Date(), kind: "started", jobId: JobID(rawValue: 7), queue: .default, ownerUid: 1001)

    @Test("the journal gets ORCHD_OWNER_UID beside the job and queue")
    func journalField() {
        let fields = JournalObserver.fields(of: event, message: "m", priority: 6)
        #expect(fields.contains("ORCHD_OWNER_UID=1001"))
        #expect(fields.contains("ORCHD_JOB_ID=7"))
        var noJob = event
        noJob.jobId = nil
        noJob.ownerUid = nil
        #expect(!JournalObserver.fields(of: noJob, message: "m", priority: 6).contains { $0.hasPrefix("ORCHD_OWNER_UID=") })
    }

    @Test("a follower who is no admin gets their own jobs' events and those of no job; an admin gets all")
    func subscriberFilter() {
        let owner = EventSubscriber(queue: nil, jobID: nil, caller: Caller(uid: 1001, isAdmin: false)) { _ in true }
        let other = EventSubscriber(queue: nil, jobID: nil, caller: Caller(uid: 1002, isAdmin: false)) { _ in true }
        let admin = EventSubscriber(queue: nil, jobID: nil, caller: Caller(uid: 1003, isAdmin: true)) { _ in true }
        #expect(owner.wants(event) && !other.wants(event) && admin.wants(event))
        var pruned = event
        pruned.ownerUid = nil
        #expect(!other.wants(pruned) && admin.wants(pruned), "an event whose job is gone is for admins only")
        let queueEvent = Event(seq: 4, at: Date(), kind: "queue_paused", queue: .default)
        #expect(other.wants(queueEvent))
    }

    @Test("the event log reads each job event's owner from its job")
    func eventLogOwner() throws {
        let directory = NSTemporaryDirectory() + "orchd-owner-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try JobStore(database: try Database(path: directory + "/orchd.db"))
        let spec = JobSpec(command: .argv(["true"]), cwd: "/", environment: [:])
        let job = try store.insert(spec, submitterUid: 1234, at: Date())
        let events = try EventLog(database: store.database).events(after: 0, limit: 10)
        #expect(events.first { $0.jobId == job.id }?.ownerUid == 1234)
    }
}
