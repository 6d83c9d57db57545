import FoundationEssentials
import Testing

@testable import OrchestratorAPI

@Suite("A Submit call written directly agrees with JSONEncoder")
struct SubmitCallJSONBytesTests {
    /// Strings that need escaping or are outside ASCII.
    static let hostile = [
        "", "plain", "quote \" and backslash \\", "slash / ", "nul \u{0} unit \u{1F} del \u{7F}",
        "tab\tnewline\ncr\r", "\u{8}\u{C}", "line sep \u{2028} para \u{2029}", "é CJK 漢字 emoji 🙂👩‍👩‍👧",
        "\\u0041 looks escaped",
    ]

    static let specs: [JobSpec] = {
        var specs: [JobSpec] = [
            JobSpec(command: .argv(["true"]), cwd: "/tmp", environment: [:]),
            JobSpec(command: .shell("echo hi > /dev/null"), cwd: "/", environment: ["PATH": "/usr/bin:/bin"]),
            JobSpec(command: .argv(["make", "-j", "2"]), cwd: "/w", environment: ["A": "1"],
                    queue: QueueName(rawValue: "q-1.x_y")!, priority: -5, name: "n", labels: ["k": "v", "x": ""],
                    after: [JobID(rawValue: 1), JobID(rawValue: Int64.max)],
                    notBefore: Date(timeIntervalSince1970: 1_893_456_000.125), timeoutUSec: 1_000_000,
                    maxAttempts: 3, uniqueKey: "nightly"),
            JobSpec(command: .argv(["x"]), cwd: "/", environment: [:], priority: Int.min, timeoutUSec: Int64.max, maxAttempts: 1000),
        ]
        for text in hostile {
            specs.append(JobSpec(
                command: .argv([text.isEmpty ? "x" : text, text]), cwd: "/" + text,
                environment: [text.isEmpty ? "E" : text: text], name: text, labels: [text: text], uniqueKey: text))
            specs.append(JobSpec(command: .shell(text.isEmpty ? "x" : text), cwd: "/", environment: [:]))
        }
        return specs
    }()

    @Test("a job spec written by hand decodes to the spec, as JSONEncoder's text does", arguments: specs)
    func specAgrees(spec: JobSpec) throws {
        let decoder = JSONDecoder()
        let written = try decoder.decode(JobSpec.self, from: Data(spec.jsonBytes))
        let encoded = try decoder.decode(JobSpec.self, from: JSONEncoder().encode(spec))
        #expect(written == encoded)
        #expect(written == spec)
    }

    @Test("a Submit call is written by hand, with its header fields, and decodes to the same call")
    func submitCall() throws {
        for spec in Self.specs {
            for reuse in [nil, true, false] as [Bool?] {
                for more in [nil, true] as [Bool?] {
                    let call = VarlinkCall(
                        method: JobsInterface.submit.name,
                        parameters: JobsInterface.SubmitParameters(spec: spec, reuseExisting: reuse), more: more)
                    let bytes = try call.encoded(with: JSONEncoder(), writingParameters: JobsInterface.submit.writeParameters)
                    #expect(bytes.first == UInt8(ascii: "{") && !bytes.contains(0))
                    let decoded = try JSONDecoder().decode(VarlinkCall<JobsInterface.SubmitParameters>.self, from: Data(bytes))
                    #expect(decoded.method == call.method)
                    #expect(decoded.parameters?.spec == spec)
                    #expect(decoded.parameters?.reuseExisting == reuse)
                    #expect(decoded.more == more)
                    #expect(decoded.oneway == nil)
                }
            }
        }
    }

    @Test("a Submit reply's job ID is read without JSONDecoder as JSONDecoder reads it, or left to it", arguments: [
        #"{"job":{"id":7}}"#, #"{"job":{"after":[],"id":42,"name":"x\"y","state":"queued"},"existing":true}"#,
        #" { "existing" : null , "job" : { "labels" : { "id" : 3 } , "id" : 9223372036854775807 } } "#,
        #"{"job":{"id":"7"}}"#, #"{"job":{"id":7.5}}"#, #"{"job":{}}"#, #"{}"#, #"{"job":null}"#, #"[]"#,
        #"{"job":{"id":1,"id":2}}"#, #"{"job":{"id":1},"job":{"id":2}}"#, #"{"job":{"id":1}"#, #"{"job":{"id":-0}}"#,
    ])
    func jobIDReply(text: String) throws {
        let codable = try? JSONDecoder().decode(JobsInterface.JobIDReply.self, from: Data(text.utf8)).job.id
        let fast = Array(text.utf8).withUnsafeBufferPointer { bytes -> JobID? in
            var reader = JSONByteReader(bytes: bytes)
            guard let reply = JobsInterface.JobIDReply.read(&reader), reader.atEnd() else { return nil }
            return reply.job.id
        }
        if let fast {
            #expect(fast == codable, "read \(fast), JSONDecoder \(String(describing: codable))")
        }
        if codable == nil { #expect(fast == nil, "what JSONDecoder refuses is left to it") }
    }

    @Test("a SubmitBatch call is written by hand and decodes to the same specs, environment and returnJobs")
    func submitBatchCall() throws {
        let write = try #require(JobsInterface.submitBatch.writeParameters)
        for environment in [nil, [:], ["PATH": "/usr/bin", "é": "\u{0}x\"y"]] as [[String: String]?] {
            for returnJobs in [nil, true, false] as [Bool?] {
                for specs in [[], [Self.specs[0]], Self.specs] {
                    let parameters = JobsInterface.SubmitBatchParameters(specs: specs, environment: environment, returnJobs: returnJobs)
                    var writer = JSONByteWriter()
                    write(parameters, &writer)
                    let decoded = try JSONDecoder().decode(JobsInterface.SubmitBatchParameters.self, from: Data(writer.bytes))
                    #expect(decoded.specs == specs)
                    #expect(decoded.environment == environment)
                    #expect(decoded.returnJobs == returnJobs)
                }
            }
        }
    }

    @Test("environments compare by their bytes: one dictionary with itself, equal copies, and canonically equal but different bytes")
    func environmentBytes() {
        let shared = ["PATH": "/usr/bin", "LANG": "C.UTF-8"]
        let copy = Dictionary(uniqueKeysWithValues: shared.map { ($0.key, $0.value) })
        #expect(JobSpec.environmentsHaveSameBytes(shared, shared))
        #expect(JobSpec.environmentsHaveSameBytes(shared, copy))
        #expect(JobSpec.environmentsHaveSameBytes([:], [:]))
        #expect(!JobSpec.environmentsHaveSameBytes(shared, [:]))
        #expect(!JobSpec.environmentsHaveSameBytes(["A": "1"], ["A": "12"]))
        #expect(!JobSpec.environmentsHaveSameBytes(["A": "1"], ["B": "1"]))
        // "é" as one code point and as "e" with a combining accent: == calls them equal.
        #expect(["X": "\u{E9}"] == ["X": "e\u{301}"])
        #expect(!JobSpec.environmentsHaveSameBytes(["X": "\u{E9}"], ["X": "e\u{301}"]))
    }

    @Test("Wait's parameters written directly decode to the same IDs", arguments: [[], [1], [3, 1, Int64.max]] as [[Int64]])
    func waitParameters(ids: [Int64]) throws {
        let parameters = JobsInterface.IDsParameters(ids: ids.map(JobID.init(rawValue:)))
        var writer = JSONByteWriter()
        let write = try #require(JobsInterface.wait.writeParameters)
        write(parameters, &writer)
        let decoded = try JSONDecoder().decode(JobsInterface.IDsParameters.self, from: Data(writer.bytes))
        #expect(decoded.ids == parameters.ids)
    }

    @Test("object keys are ordered by their UTF-8 bytes, as the generic comparison orders them")
    func keyOrder() {
        let keys = ["", "a", "A", "AA", "ab", "a\u{0}", "é", "e\u{301}", "漢", "🙂", "Z", "_", "a b"]
        for a in keys {
            for b in keys {
                #expect(JSONByteWriter.utf8Precedes(a, b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a) < \(b)")
            }
        }
    }

    @Test("an object's keys are written in UTF-8 byte order, ASCII or not", arguments: [
        ["PATH": "/bin", "HOME": "/root", "_": "x", "a": "1", "A": "2", "AB": "3", "A_": "4", "": "5"],
        ["é": "1", "ø": "2", "z": "3", "Z": "4", "漢": "5", "🙂": "6", "a\u{0}": "7", "a": "8"],
        // Keys that share their first eight bytes, or are eight bytes long, or differ only by
        // a trailing NUL: the sort's integer prefixes tie and the whole keys decide.
        ["XDG_SESSION_ID": "1", "XDG_SESSION_TYPE": "2", "XDG_SESS": "3", "XDG_SES": "4",
         "XDG_SESSION": "5", "XDG_SESS\u{0}": "6", "XDG_SE\u{0}\u{0}": "7", "XDG_SE": "8", "XDG_SESSIO\u{0}N": "9"],
    ])
    func objectKeyOrder(dictionary: [String: String]) throws {
        let keys = JSONByteWriter.entriesInUTF8Order(dictionary).map(\.key)
        #expect(keys == dictionary.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        var writer = JSONByteWriter()
        writer.object(dictionary)
        #expect(try JSONDecoder().decode([String: String].self, from: Data(writer.bytes)) == dictionary)
    }

    /// A Wait reply's jobs read for their ID and state: directly and through JSONDecoder.
    static func ends(_ text: String) -> (fast: [JobsInterface.JobEndsReply.JobEnd]?, codable: [JobsInterface.JobEndsReply.JobEnd]?) {
        let codable = try? JSONDecoder().decode(JobsInterface.JobEndsReply.self, from: Data(text.utf8)).jobs
        let fast = Array(text.utf8).withUnsafeBufferPointer { bytes -> [JobsInterface.JobEndsReply.JobEnd]? in
            var reader = JSONByteReader(bytes: bytes)
            guard let reply = JobsInterface.JobEndsReply.read(&reader), reader.atEnd() else { return nil }
            return reply.jobs
        }
        return (fast, codable)
    }

    @Test("a Wait reply's IDs and states are read directly as JSONDecoder reads them, for every sample job")
    func jobEndsOfSamples() throws {
        let text = String(decoding: try JSONEncoder().encode(JobsInterface.JobsReply(jobs: JobJSONSamples.jobs)), as: UTF8.self)
        let (fast, codable) = Self.ends(text)
        let read = try #require(fast, "the reader takes what orchd sends")
        #expect(read.map(\.id) == JobJSONSamples.jobs.map(\.id))
        #expect(read.map(\.state) == JobJSONSamples.jobs.map(\.state))
        #expect(codable.map { $0.map(\.state) } == read.map(\.state))
    }

    @Test("a Wait reply the reader does not take is left to JSONDecoder, and nothing it takes reads differently", arguments: [
        #"{"jobs":[]}"#, #"{"jobs":[{"id":1,"state":"queued"}]}"#,
        #"{"jobs":[{"id":1,"state":"finished","result":"failed","exitCode":3,"signal":null,"reason":null}]}"#,
        #"{"jobs":[{"id":1,"state":"finished","result":"failed","exitCode":4294967296}]}"#,
        #"{"jobs":[{"id":1,"state":"finished","result":"failed","exitCode":3.0}]}"#,
        #"{"jobs":[{"id":1,"state":"finished","result":"nonsense"}]}"#, #"{"jobs":[{"id":1,"state":"finished"}]}"#,
        #"{"jobs":[{"id":1,"state":"sleeping"}]}"#, #"{"jobs":[{"id":1,"id":2,"state":"queued"}]}"#,
        #"{"jobs":[{"state":"queued"}]}"#, #"{"jobs":null}"#, #"{}"#, #"{"jobs":[{"id":1,"state":"finished","result":"signaled","signal":9}],"jobs":[]}"#,
        #"{"jobs":[{"id":1,"state":"finished","result":"spawn_failed","reason":"no \"x\"","exitCode":127}]}"#,
    ])
    func jobEnds(text: String) {
        let (fast, codable) = Self.ends(text)
        if let fast {
            #expect(codable != nil, "the reader took what JSONDecoder refuses")
            #expect(fast.map(\.id) == codable?.map(\.id))
            #expect(fast.map(\.state) == codable?.map(\.state))
        }
    }

    @Test("a List page's IDs are read directly as JSONDecoder reads them, or left to it", arguments: [
        #"{"jobs":[]}"#, #"{"jobs":[{"id":1},{"state":"queued","id":2}]}"#, #"{"jobs":[{"id":1,"id":2}]}"#,
        #"{"jobs":[{"name":"x"}]}"#, #"{"jobs":[{"id":"1"}]}"#, #"{"jobs":{}}"#, #"{"jobs":[],"jobs":[]}"#,
    ])
    func jobIDs(text: String) {
        let codable = try? JSONDecoder().decode(JobsInterface.JobIDsReply.self, from: Data(text.utf8)).jobs.map(\.id)
        let fast = Array(text.utf8).withUnsafeBufferPointer { bytes -> [JobID]? in
            var reader = JSONByteReader(bytes: bytes)
            guard let reply = JobsInterface.JobIDsReply.read(&reader), reader.atEnd() else { return nil }
            return reply.jobs.map(\.id)
        }
        if let fast { #expect(fast == codable) }
        if codable == nil { #expect(fast == nil) }
    }

    @Test("a List page's IDs, states and start times are read directly as JSONDecoder reads them, or left to it", arguments: [
        #"{"jobs":[]}"#, #"{"jobs":[{"id":1,"state":"waiting","notBefore":"2026-11-29T14:00:00.25Z"},{"notBefore":null,"state":"queued","id":2}]}"#,
        #"{"jobs":[{"id":1,"state":"queued"}]}"#, #"{"jobs":[{"id":1,"state":"waiting","notBefore":"tomorrow"}]}"#,
        #"{"jobs":[{"id":1,"state":"waiting","notBefore":7}]}"#, #"{"jobs":[{"id":1,"id":2,"state":"waiting"}]}"#,
        #"{"jobs":[{"id":1}]}"#, #"{"jobs":[{"state":"waiting"}]}"#,
        #"{"jobs":[{"id":1,"state":"waiting","notBefore":"2026-11-29T14:00:00Z","notBefore":null}]}"#,
        #"{"jobs":[{"id":1,"state":"queued","held":true}]}"#, #"{"jobs":[{"id":1,"state":"queued","held":false}]}"#,
        #"{"jobs":[{"id":1,"state":"queued","held":1}]}"#, #"{"jobs":[{"id":1,"state":"queued","held":null}]}"#,
        #"{"jobs":[{"id":1,"state":"queued","queue":"io"}]}"#, #"{"jobs":[{"id":1,"state":"queued","queue":null}]}"#,
        #"{"jobs":[{"id":1,"state":"queued","queue":"bad name!"}]}"#, #"{"jobs":[{"id":1,"state":"queued","queue":7}]}"#,
        #"{"jobs":[{"id":1,"state":"queued","queue":"io","queue":"io"}]}"#,
    ])
    func jobStarts(text: String) {
        typealias Start = JobsInterface.JobStartsReply.JobStart
        func fields(_ jobs: [Start]) -> [String] {
            jobs.map { "\($0.id) \($0.state) \(String(describing: $0.notBefore)) \($0.held) \(String(describing: $0.queue))" }
        }
        let codable = (try? JSONDecoder().decode(JobsInterface.JobStartsReply.self, from: Data(text.utf8)).jobs).map(fields)
        let fast = Array(text.utf8).withUnsafeBufferPointer { bytes -> [String]? in
            var reader = JSONByteReader(bytes: bytes)
            guard let reply = JobsInterface.JobStartsReply.read(&reader), reader.atEnd() else { return nil }
            return fields(reply.jobs)
        }
        if let fast { #expect(fast == codable) }
        if codable == nil { #expect(fast == nil) }
    }

    @Test("a List page of every sample job gives their IDs, states and start times")
    func jobStartsOfSamples() throws {
        let text = String(decoding: try JSONEncoder().encode(JobsInterface.JobsReply(jobs: JobJSONSamples.jobs)), as: UTF8.self)
        let starts = Array(text.utf8).withUnsafeBufferPointer { bytes -> [JobsInterface.JobStartsReply.JobStart]? in
            var reader = JSONByteReader(bytes: bytes)
            return JobsInterface.JobStartsReply.read(&reader)?.jobs
        }
        let read = try #require(starts, "the reader takes what orchd sends")
        #expect(read.map(\.id) == JobJSONSamples.jobs.map(\.id))
        #expect(read.map(\.state) == JobJSONSamples.jobs.map(\.state.name))
        // As a whole job's decoding reads them (RFC 3339 keeps milliseconds).
        let decoded = try JSONDecoder().decode(JobsInterface.JobsReply.self, from: Data(text.utf8)).jobs
        #expect(read.map { $0.notBefore?.timeIntervalSince1970.bitPattern } == decoded.map { $0.spec.notBefore?.timeIntervalSince1970.bitPattern })
        #expect(read.map(\.held) == decoded.map(\.held))
        #expect(read.map(\.queue) == decoded.map(\.spec.queue))
    }

    @Test("a Submit reply read for the job's start and queue reads as JSONDecoder reads it, or is left to it", arguments: [
        #"{"job":{"id":3,"state":"queued","queue":"io","held":false,"notBefore":null,"argv":["true"]},"existing":false}"#,
        #"{"job":{"id":3,"state":"running"}}"#, #"{"job":{"id":3}}"#, #"{"job":[]}"#, #"{}"#,
        #"{"job":{"id":3,"state":"queued","queue":"no such name!"}}"#,
    ])
    func jobStart(text: String) {
        func fields(_ job: JobsInterface.JobStartsReply.JobStart) -> String {
            "\(job.id) \(job.state) \(String(describing: job.notBefore)) \(job.held) \(String(describing: job.queue))"
        }
        let codable = (try? JSONDecoder().decode(JobsInterface.JobStartReply.self, from: Data(text.utf8)).job).map(fields)
        let fast = Array(text.utf8).withUnsafeBufferPointer { bytes -> String? in
            var reader = JSONByteReader(bytes: bytes)
            guard let reply = JobsInterface.JobStartReply.read(&reader), reader.atEnd() else { return nil }
            return fields(reply.job)
        }
        if let fast { #expect(fast == codable) }
        if codable == nil { #expect(fast == nil) }
    }

    @Test("a List page of every sample job gives its IDs in order")
    func jobIDsOfSamples() throws {
        let text = String(decoding: try JSONEncoder().encode(JobsInterface.JobsReply(jobs: JobJSONSamples.jobs)), as: UTF8.self)
        let ids = Array(text.utf8).withUnsafeBufferPointer { bytes -> [JobID]? in
            var reader = JSONByteReader(bytes: bytes)
            return JobsInterface.JobIDsReply.read(&reader)?.jobs.map(\.id)
        }
        #expect(ids == JobJSONSamples.jobs.map(\.id))
    }
}

