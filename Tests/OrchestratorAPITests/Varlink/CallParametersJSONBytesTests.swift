import FoundationEssentials
import Testing

@testable import OrchestratorAPI

@Suite("Everyday calls' parameters written directly agree with JSONEncoder")
struct CallParametersJSONBytesTests {
    /// Strings that need escaping or are outside ASCII.
    static let hostile = SubmitCallJSONBytesTests.hostile
    static let queue = QueueName(rawValue: "q-1.x_y")!

    /// `value`'s JSON as its writer writes it and as `JSONEncoder` does, each decoded by
    /// `JSONDecoder` and encoded again with sorted keys, so that key order does not count.
    static func bothWays<P: Codable & JSONByteEncodable>(_ value: P) throws -> (written: String, encoded: String) {
        let canonical = JSONEncoder()
        canonical.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let written = try canonical.encode(JSONDecoder().decode(P.self, from: Data(value.jsonBytes)))
        let encoded = try canonical.encode(JSONDecoder().decode(P.self, from: JSONEncoder().encode(value)))
        return (String(decoding: written, as: UTF8.self), String(decoding: encoded, as: UTF8.self))
    }

    /// The keys `value`'s writer writes, and those `JSONEncoder` writes: an absent optional
    /// must be left out by both, not written as `null`.
    static func keys<P: Codable & JSONByteEncodable>(_ value: P) throws -> (written: [String], encoded: [String]) {
        func keys(_ bytes: [UInt8]) throws -> [String] {
            try JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)).keys.sorted()
        }
        return (try keys(value.jsonBytes), try keys(Array(JSONEncoder().encode(value))))
    }

    static func expectAgreement<P: Codable & JSONByteEncodable>(_ value: P, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let both = try bothWays(value)
        #expect(both.written == both.encoded, sourceLocation: sourceLocation)
        let keys = try keys(value)
        #expect(keys.written == keys.encoded, sourceLocation: sourceLocation)
    }

    @Test("List's parameters: every filter alone, all together, none, and hostile strings")
    func list() throws {
        var cases: [JobsInterface.ListParameters] = [
            .init(), .init(ids: []), .init(ids: [JobID(rawValue: 1), JobID(rawValue: Int64.max)]), .init(queue: Self.queue),
            .init(state: "running"), .init(limit: 0), .init(limit: Int.max), .init(allUsers: true), .init(allUsers: false),
            .init(result: "failed"), .init(labels: [:]), .init(labels: ["b": "2", "a": "1"]),
            .init(ids: [JobID(rawValue: 3)], queue: Self.queue, state: "finished", limit: 200, allUsers: true, result: "succeeded",
                  labels: ["k": "v"]),
        ]
        for text in Self.hostile {
            cases.append(.init(state: text, result: text, labels: [text: text]))
        }
        for parameters in cases { try Self.expectAgreement(parameters) }
    }

    @Test("GetUserNames' parameters: none, one, the extremes of a uid, and repeats")
    func userNames() throws {
        for uids: [UInt32] in [[], [0], [0, 1000, UInt32.max], [7, 7, 7]] {
            try Self.expectAgreement(ManagerInterface.UserNamesParameters(uids: uids))
        }
    }

    @Test("Cancel's and CancelMatching's parameters, with and without a signal")
    func cancel() throws {
        for signal in [nil, "KILL", "quote \" sig"] as [String?] {
            try Self.expectAgreement(JobsInterface.CancelParameters(ids: [JobID(rawValue: 5)], signal: signal))
            try Self.expectAgreement(JobsInterface.CancelParameters(ids: [], signal: signal))
            try Self.expectAgreement(JobsInterface.CancelMatchingParameters(signal: signal))
            try Self.expectAgreement(JobsInterface.CancelMatchingParameters(queue: Self.queue, state: "queued", signal: signal))
            try Self.expectAgreement(JobsInterface.CancelMatchingParameters(state: "running", signal: signal))
        }
    }

    @Test("Logs' parameters, each optional field alone and all together")
    func logs() throws {
        let id = JobID(rawValue: 42)
        for stream in [JobsInterface.LogStream.stdout, .stderr] {
            try Self.expectAgreement(JobsInterface.LogsParameters(id: id, stream: stream))
            try Self.expectAgreement(JobsInterface.LogsParameters(id: id, stream: stream, offset: 0))
            try Self.expectAgreement(JobsInterface.LogsParameters(id: id, stream: stream, offset: Int64.max))
            try Self.expectAgreement(JobsInterface.LogsParameters(id: id, stream: stream, tailLines: 10))
            try Self.expectAgreement(JobsInterface.LogsParameters(id: id, stream: stream, follow: true))
            try Self.expectAgreement(JobsInterface.LogsParameters(id: id, stream: stream, attempt: 2))
            try Self.expectAgreement(JobsInterface.LogsParameters(id: id, stream: stream, fromAttempt: 3))
            try Self.expectAgreement(JobsInterface.LogsParameters(
                id: id, stream: stream, offset: 7, tailLines: 1, follow: false, attempt: 1, fromAttempt: 1))
        }
    }

    @Test("the other parameters: Get, IDs, Subscribe, Prune, RetryFailed, queue names, WaitDrained, none")
    func others() throws {
        try Self.expectAgreement(VarlinkNoParameters())
        try Self.expectAgreement(JobsInterface.GetParameters(id: JobID(rawValue: 9)))
        try Self.expectAgreement(JobsInterface.IDsParameters(ids: []))
        try Self.expectAgreement(JobsInterface.IDsParameters(ids: [JobID(rawValue: 1), JobID(rawValue: 2)]))
        try Self.expectAgreement(JobsInterface.SubscribeParameters())
        try Self.expectAgreement(JobsInterface.SubscribeParameters(since: 0, follow: true, queue: Self.queue, jobId: JobID(rawValue: 4)))
        try Self.expectAgreement(JobsInterface.SubscribeParameters(since: Int64.max))
        try Self.expectAgreement(JobsInterface.SubscribeParameters(follow: false, jobId: JobID(rawValue: 1)))
        try Self.expectAgreement(JobsInterface.SubscribeParameters(since: 7, follow: true, resume: true))
        try Self.expectAgreement(JobsInterface.PruneParameters())
        try Self.expectAgreement(JobsInterface.PruneParameters(olderThanUSec: 86_400_000_000))
        try Self.expectAgreement(JobsInterface.RetryFailedParameters())
        try Self.expectAgreement(JobsInterface.RetryFailedParameters(queue: Self.queue))
        try Self.expectAgreement(QueuesInterface.NamesParameters())
        try Self.expectAgreement(QueuesInterface.NamesParameters(names: []))
        try Self.expectAgreement(QueuesInterface.NamesParameters(names: [Self.queue, .default]))
        try Self.expectAgreement(QueuesInterface.WaitDrainedParameters(name: Self.queue))
    }

    @Test("every method whose parameters write themselves is declared to write them", arguments: [
        JobsInterface.get.writeParameters != nil, JobsInterface.list.writeParameters != nil,
        JobsInterface.cancel.writeParameters != nil, JobsInterface.cancelMatching.writeParameters != nil,
        JobsInterface.retry.writeParameters != nil, JobsInterface.retryFailed.writeParameters != nil,
        JobsInterface.hold.writeParameters != nil, JobsInterface.release.writeParameters != nil,
        JobsInterface.suspend.writeParameters != nil, JobsInterface.resume.writeParameters != nil,
        JobsInterface.prune.writeParameters != nil, JobsInterface.wait.writeParameters != nil,
        JobsInterface.logs.writeParameters != nil, JobsInterface.subscribe.writeParameters != nil,
        QueuesInterface.list.writeParameters != nil, QueuesInterface.pause.writeParameters != nil,
        QueuesInterface.resume.writeParameters != nil, QueuesInterface.waitDrained.writeParameters != nil,
        ManagerInterface.ping.writeParameters != nil, ManagerInterface.getInfo.writeParameters != nil,
        ManagerInterface.reload.writeParameters != nil, ManagerInterface.shutdown.writeParameters != nil,
    ])
    func declared(writes: Bool) {
        #expect(writes)
    }

    @Test("an empty reply is read without JSONDecoder as JSONDecoder reads it, or left to it", arguments: [
        "{}", #"{"x":1}"#, #" { "a" : [ 1 , { } ] , "b" : null } "#, "[]", "null", #"{"a":1,"a":2}"#, "{", #"{"a"}"#, "1",
    ])
    func emptyReply(text: String) {
        let codable = (try? JSONDecoder().decode(VarlinkNoParameters.self, from: Data(text.utf8))) != nil
        let fast = Array(text.utf8).withUnsafeBufferPointer { bytes -> Bool? in
            var reader = JSONByteReader(bytes: bytes)
            guard let reply = VarlinkNoParameters.read(&reader), reader.atEnd() else { return nil }
            return reply == VarlinkNoParameters()
        }
        // Given up on (a key twice): JSONDecoder judges. Read: JSONDecoder would have read it too.
        if let fast { #expect(fast && codable, "\(text)") }
        if !codable { #expect(fast == nil, "\(text)") }
    }

    @Test("a call with written parameters decodes to the same call, with its header fields")
    func call() throws {
        let parameters = JobsInterface.ListParameters(ids: [JobID(rawValue: 1)], state: "queued")
        for more in [nil, true] as [Bool?] {
            let call = VarlinkCall(method: JobsInterface.list.name, parameters: parameters, more: more)
            let bytes = try call.encoded(with: JSONEncoder(), writingParameters: JobsInterface.list.writeParameters)
            let decoded = try JSONDecoder().decode(VarlinkCall<JobsInterface.ListParameters>.self, from: Data(bytes))
            #expect(decoded.method == "io.orchd.Jobs.List")
            #expect(decoded.parameters?.ids == [JobID(rawValue: 1)])
            #expect(decoded.parameters?.state == "queued")
            #expect(decoded.parameters?.queue == nil)
            #expect(decoded.more == more)
        }
    }
}
