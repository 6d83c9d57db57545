import FoundationEssentials
import OrchestratorAPI
import Testing

@Suite("Jobs written as bytes read back as JSONEncoder's do")
struct JobJSONBytesTests {
    /// The encoder the daemon's replies used before they wrote themselves.
    static func encoded(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// The two texts are the same value, as the type and as plain JSON (which tells an absent
    /// key from `null`, where `decodeIfPresent` would not).
    static func expectSameValue<T: Decodable & Equatable>(_ type: T.Type, _ direct: [UInt8], _ reference: [UInt8]) throws {
        let decoder = JSONDecoder()
        #expect(try decoder.decode(T.self, from: Data(direct)) == decoder.decode(T.self, from: Data(reference)))
        #expect(try decoder.decode(JSONValue.self, from: Data(direct)) == decoder.decode(JSONValue.self, from: Data(reference)))
    }

    @Test("every sample job decodes to the same job and the same JSON", arguments: JobJSONSamples.jobs)
    func job(_ job: Job) throws {
        try Self.expectSameValue(Job.self, job.jsonBytes, Self.encoded(job))
    }

    @Test("the bytes are JSONEncoder's, keys in its order", arguments: JobJSONSamples.jobs)
    func sameBytes(_ job: Job) throws {
        #expect(String(decoding: job.jsonBytes, as: UTF8.self) == String(decoding: try Self.encoded(job), as: UTF8.self))
    }

    @Test("every sample attempt decodes to the same attempt and the same JSON", arguments: JobJSONSamples.attempts)
    func attempt(_ attempt: JobAttempt) throws {
        try Self.expectSameValue(JobAttempt.self, attempt.jsonBytes, Self.encoded(attempt))
        #expect(String(decoding: attempt.jsonBytes, as: UTF8.self) == String(decoding: try Self.encoded(attempt), as: UTF8.self))
    }
}
