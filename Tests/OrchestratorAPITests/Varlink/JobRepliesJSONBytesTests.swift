import FoundationEssentials
import OrchestratorAPI
import Testing

@Suite("Job replies written as bytes read back as JSONEncoder's do")
struct JobRepliesJSONBytesTests {
    static let jobs = JobJSONSamples.jobs

    /// Both texts decode to the same reply (compared through its re-encoding, as the replies
    /// are not Equatable) and the same plain JSON; and they are the same bytes.
    static func expectSame<Reply: Codable & JSONByteEncodable>(_ reply: Reply) throws {
        let reference = try JobJSONBytesTests.encoded(reply)
        let direct = reply.jsonBytes
        let decoder = JSONDecoder()
        #expect(try decoder.decode(JSONValue.self, from: Data(direct)) == decoder.decode(JSONValue.self, from: Data(reference)))
        let again = try JobJSONBytesTests.encoded(decoder.decode(Reply.self, from: Data(direct)))
        #expect(again == reference)
        #expect(String(decoding: direct, as: UTF8.self) == String(decoding: reference, as: UTF8.self))
    }

    @Test("JobReply, with and without existing and attempts")
    func jobReply() throws {
        for job in Self.jobs.prefix(12) + Self.jobs.suffix(12) {
            try Self.expectSame(JobsInterface.JobReply(job: job))
            try Self.expectSame(JobsInterface.JobReply(job: job, existing: true))
            try Self.expectSame(JobsInterface.JobReply(job: job, existing: false, attempts: []))
            try Self.expectSame(JobsInterface.JobReply(job: job, attempts: JobJSONSamples.attempts))
        }
    }

    @Test("JobsReply, empty, one job and every sample job")
    func jobsReply() throws {
        try Self.expectSame(JobsInterface.JobsReply(jobs: []))
        try Self.expectSame(JobsInterface.JobsReply(jobs: [JobJSONSamples.minimal()]))
        try Self.expectSame(JobsInterface.JobsReply(jobs: Self.jobs))
    }

    @Test("SubmitBatchReply, with and without jobs")
    func submitBatchReply() throws {
        try Self.expectSame(JobsInterface.SubmitBatchReply(ids: [], jobs: nil))
        try Self.expectSame(JobsInterface.SubmitBatchReply(ids: Self.jobs.map(\.id), jobs: nil))
        try Self.expectSame(JobsInterface.SubmitBatchReply(ids: [JobID(rawValue: 1)], jobs: [JobJSONSamples.minimal()]))
        try Self.expectSame(JobsInterface.SubmitBatchReply(ids: [], jobs: []))
    }

    @Test("RetryFailedReply, with refusals that need escaping")
    func retryFailedReply() throws {
        try Self.expectSame(JobsInterface.RetryFailedReply(jobs: [], refused: []))
        try Self.expectSame(JobsInterface.RetryFailedReply(
            jobs: [JobJSONSamples.minimal(), JobJSONSamples.full(state: .queued)],
            refused: JobJSONSamples.hostileStrings.enumerated().map { .init(id: JobID(rawValue: Int64($0.offset + 1)), message: $0.element) }))
    }
}
