import Foundation
import OrchestratorAPI
import Synchronization
import Testing

@testable import Orchestrator

@Suite("Replies carrying jobs skip JSONEncoder and read back the same")
struct DirectReplyEncoderTests {
    static let jobs: [Job] = {
        let hostile = ["quote\"back\\slash", "\u{0}\u{1F}\u{7F}\u{2028}", "emoji 🙂 CJK 漢字", #"\uD800 \u0000"#, "/a/b"]
        var jobs: [Job] = []
        for (index, text) in hostile.enumerated() {
            var job = Job(
                id: JobID(rawValue: Int64(index + 1)),
                spec: JobSpec(
                    command: index.isMultiple(of: 2) ? .argv([text, "x"]) : .shell(text), cwd: text, environment: ["K": text],
                    name: text, labels: [text: text, "team": "infra"], after: [JobID(rawValue: 1)],
                    notBefore: Date(timeIntervalSince1970: 1_795_000_000.125), timeoutUSec: 5_000_000, maxAttempts: 2, uniqueKey: text),
                state: [.waiting, .queued, .running, .finished(.spawnFailed(reason: text)), .finished(.signaled(signal: 15))][index],
                attempt: index, submittedAt: Date(timeIntervalSince1970: 1_795_000_000.497),
                startedAt: index >= 2 ? Date(timeIntervalSince1970: 1_795_000_001) : nil,
                finishedAt: index >= 3 ? Date(timeIntervalSince1970: 1_795_000_002) : nil, submitterUid: 1000,
                pid: index == 2 ? 77 : nil)
            job.slurmJobId = index == 2 ? text : nil
            jobs.append(job)
        }
        return jobs
    }()

    /// The message `VarlinkResponder` sent before replies wrote themselves.
    static func reference<P: Codable & Sendable>(_ parameters: P, continues: Bool) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(VarlinkReply(parameters: parameters, continues: continues ? true : nil))
    }

    /// The direct message exists, reads back as the reference does (as the client decodes it,
    /// and as plain JSON), and is the same text.
    static func expectDirect<P: Codable & Sendable>(_ parameters: P) throws {
        for continues in [false, true] {
            let direct = try #require(DirectReplyEncoder.message(parameters, continues: continues))
            let reference = try reference(parameters, continues: continues)
            let decoder = JSONDecoder()
            #expect(try decoder.decode(JSONValue.self, from: direct) == decoder.decode(JSONValue.self, from: reference))
            let decoded = try decoder.decode(VarlinkReply<P>.self, from: direct)
            #expect(decoded.continues == (continues ? true : nil))
            #expect(decoded.error == nil)
            #expect(try Self.reference(try #require(decoded.parameters), continues: continues) == reference)
            #expect(String(decoding: direct, as: UTF8.self) == String(decoding: reference, as: UTF8.self))
        }
    }

    @Test("Subscribe's events, and the empty backlog's reply without one")
    func eventReply() throws {
        try Self.expectDirect(JobsInterface.EventReply(event: nil))
        for event in [
            Event(seq: 1, at: Date(timeIntervalSince1970: 0), kind: .daemonReady),
            Event(
                seq: Int64.max, at: Date(timeIntervalSince1970: 1_795_000_000.125), kind: .finished, jobId: JobID(rawValue: 7),
                queue: QueueName(rawValue: "builds")!, state: "finished", previousState: "running", result: "failed",
                exitCode: -1, signal: 15, attempt: 2, ownerUid: 1000),
        ] + Self.jobs.map({ Event(seq: 9, at: $0.submittedAt, kind: EventKind(rawValue: $0.spec.cwd), state: $0.spec.cwd, result: $0.spec.cwd) }) {
            try Self.expectDirect(JobsInterface.EventReply(event: event))
        }
    }

    @Test("Submit's, Get's and the other single-job replies")
    func jobReply() throws {
        for job in Self.jobs {
            try Self.expectDirect(JobsInterface.JobReply(job: job))
            try Self.expectDirect(JobsInterface.JobReply(job: job, existing: true))
            try Self.expectDirect(JobsInterface.JobReply(
                job: job, attempts: [JobAttempt(attempt: 1, startedAt: nil, finishedAt: job.submittedAt, result: .spawnFailed(reason: "\u{1}"))]))
        }
    }

    @Test("Wait's and List's pages, Cancel's and the other job-list replies")
    func jobsReply() throws {
        try Self.expectDirect(JobsInterface.JobsReply(jobs: []))
        try Self.expectDirect(JobsInterface.JobsReply(jobs: Self.jobs))
    }

    @Test("SubmitBatch's and RetryFailed's replies")
    func batchReplies() throws {
        try Self.expectDirect(JobsInterface.SubmitBatchReply(ids: Self.jobs.map(\.id), jobs: nil))
        try Self.expectDirect(JobsInterface.SubmitBatchReply(ids: Self.jobs.map(\.id), jobs: Self.jobs))
        try Self.expectDirect(JobsInterface.RetryFailedReply(
            jobs: Self.jobs, refused: [.init(id: JobID(rawValue: 9), message: "cannot \"retry\"\n")]))
    }

    @Test("an empty reply (Ping's, Shutdown's) writes itself too")
    func emptyReply() throws {
        try Self.expectDirect(VarlinkNoParameters())
    }

    @Test("other replies are left to JSONEncoder")
    func otherReplies() {
        #expect(DirectReplyEncoder.message(JobsInterface.PruneReply(pruned: 3), continues: false) == nil)
    }

    /// What a responder sent, as its connection would write it.
    final class Sent: Sendable {
        let messages = Mutex<[Data]>([])
    }

    static func responder(more: Bool, into sent: Sent) -> VarlinkResponder {
        VarlinkResponder(
            send: { encode, _ in
                let data = encode()
                sent.messages.withLock { $0.append(data) }
            },
            isConnected: { true }, isBackedUp: { false }, whenReady: { $0() }, more: more, oneway: false)
    }

    @Test("the responder sends what the direct encoder writes, with continues only in a more call")
    func responderTakesTheDirectPath() throws {
        let sent = Sent()
        let reply = JobsInterface.JobsReply(jobs: Self.jobs)
        Self.responder(more: true, into: sent).reply(reply, continues: true)
        Self.responder(more: false, into: sent).reply(reply, continues: true)
        Self.responder(more: false, into: sent).reply(JobsInterface.JobReply(job: Self.jobs[0]))
        let messages = sent.messages.withLock { $0 }
        #expect(messages == [
            try #require(DirectReplyEncoder.message(reply, continues: true)),
            try #require(DirectReplyEncoder.message(reply, continues: false)),
            try #require(DirectReplyEncoder.message(JobsInterface.JobReply(job: Self.jobs[0]), continues: false)),
        ])
    }
}
