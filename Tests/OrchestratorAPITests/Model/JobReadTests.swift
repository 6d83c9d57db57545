import FoundationEssentials
import Testing

@testable import OrchestratorAPI

@Suite("Jobs read from replies without JSONDecoder read as JSONDecoder reads them, or are left to it")
struct JobReadTests {
    /// `text` read by `read` to its end, or `nil` when the reader gives up.
    static func fast<Value>(_ text: String, _ read: (inout JSONByteReader) -> Value?) -> Value? {
        Array(text.utf8).withUnsafeBufferPointer { bytes -> Value? in
            var reader = JSONByteReader(bytes: bytes)
            guard let value = read(&reader), reader.atEnd() else { return nil }
            return value
        }
    }

    /// As the other ``expectAgreement(_:_:sourceLocation:)``, for a part of a decoded reply.
    static func expectAgreement<Reply: Decodable, Value: Equatable>(
        _ text: String, _ read: (inout JSONByteReader) -> Value?, decoding: Reply.Type, _ part: (Reply) -> Value,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let codable = (try? JSONDecoder().decode(Reply.self, from: Data(text.utf8))).map(part)
        let fast = Self.fast(text, read)
        if let fast {
            #expect(fast == codable, "read \(fast), JSONDecoder \(String(describing: codable)) from \(text)", sourceLocation: sourceLocation)
        }
        if codable == nil {
            #expect(fast == nil, "\(text)", sourceLocation: sourceLocation)
        }
    }

    /// The reader and `JSONDecoder` agree on `text`: what the reader takes, the decoder
    /// decodes to the same value; what the decoder refuses, the reader gives up on.
    static func expectAgreement<Value: Decodable & Equatable>(
        _ text: String, _ read: (inout JSONByteReader) -> Value?, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let codable = try? JSONDecoder().decode(Value.self, from: Data(text.utf8))
        let fast = Self.fast(text, read)
        if let fast {
            #expect(fast == codable, "read \(fast), JSONDecoder \(String(describing: codable)) from \(text)", sourceLocation: sourceLocation)
        }
        if codable == nil {
            #expect(fast == nil, "\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test("every sample job, as orchd writes it, is read by hand to the job JSONDecoder reads")
    func samples() throws {
        for job in JobJSONSamples.jobs {
            let text = String(decoding: job.jsonBytes, as: UTF8.self)
            let read = try #require(Self.fast(text, Job.read), "\(text)")
            let decoded = try JSONDecoder().decode(Job.self, from: Data(text.utf8))
            #expect(read == decoded)
            #expect(read.slurmJobId == decoded.slurmJobId)
            #expect(read.id == job.id && read.state == job.state && read.spec.command == job.spec.command)
        }
    }

    /// A plain job's members, to build altered texts from.
    static let members: [(key: String, value: String)] = [
        ("id", "7"), ("argv", #"["true"]"#), ("shell", "null"), ("cwd", #""/tmp""#), ("queue", #""default""#), ("priority", "0"),
        ("name", "null"), ("labels", "{}"), ("after", "[]"), ("notBefore", "null"), ("timeoutUSec", "null"), ("maxAttempts", "1"),
        ("uniqueKey", "null"), ("state", #""queued""#), ("result", "null"), ("exitCode", "null"), ("signal", "null"),
        ("reason", "null"), ("failedDependency", "null"), ("attempt", "0"), ("submittedAt", #""2026-12-02T08:00:00.000Z""#),
        ("startedAt", "null"), ("finishedAt", "null"), ("submitterUid", "1000"), ("pid", "null"), ("held", "false"),
        ("suspended", "false"),
    ]

    static func object(_ members: [(key: String, value: String)]) -> String {
        "{" + members.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    /// The plain job with `key` given `value` (`nil`: left out).
    static func altered(_ key: String, _ value: String?) -> String {
        object(members.compactMap { member in
            guard member.key == key else { return member }
            return value.map { (key, $0) }
        })
    }

    @Test("a job with one member left out, null, of another type, out of range or odd is read as JSONDecoder reads it, or left to it")
    func alteredMembers() {
        Self.expectAgreement(Self.object(Self.members), Job.read)
        #expect(Self.fast(Self.object(Self.members), Job.read) != nil, "the plain job is read by hand")
        let values = [
            nil, "null", "true", "1", "-1", "0", "2147483648", "-2147483649", "4294967296", "9223372036854775807", "1.0", "1e2",
            "-0", #""x""#, #""""#, "[]", "{}", #"["a",1]"#, #"{"a":"b"}"#, #"{"a":1}"#, #""2026-12-02T08:00:00Z""#,
            #""not a time""#, #""bad queue!""#, #""finished""#, #""running""#, #""nope""#, #""failed""#, #""succeeded""#,
            #""dependency_failed""#, #""\u00e9\n""#,
        ]
        for member in Self.members {
            for value in values {
                Self.expectAgreement(Self.altered(member.key, value), Job.read)
            }
        }
    }

    @Test("finished jobs: each result with its payload present, missing, null or out of range")
    func finishedJobs() {
        let results: [[(String, String)]] = [
            [("result", #""succeeded""#)], [("result", #""failed""#), ("exitCode", "3")], [("result", #""failed""#)],
            [("result", #""failed""#), ("exitCode", "4294967299")], [("result", #""signaled""#), ("signal", "9")],
            [("result", #""signaled""#), ("signal", "null")], [("result", #""timed_out""#)], [("result", #""cancelled""#)],
            [("result", #""spawn_failed""#), ("reason", #""No such file""#)], [("result", #""spawn_failed""#)],
            [("result", #""dependency_failed""#), ("failedDependency", "2")], [("result", #""dependency_failed""#)],
            [("result", #""interrupted""#)], [("result", "null")], [("result", #""unknown""#)], [],
        ]
        for result in results {
            var members = Self.members.map { member -> (key: String, value: String) in
                member.key == "state" ? (member.key, #""finished""#) : member
            }
            for (key, value) in result {
                members.removeAll { $0.key == key }
                members.append((key, value))
            }
            if !result.contains(where: { $0.0 == "result" }) { members.removeAll { $0.key == "result" } }
            Self.expectAgreement(Self.object(members), Job.read)
        }
    }

    static let oddJobTexts: [String] = {
        let plain = Self.object(Self.members)
        let open = String(plain.dropLast())
        var texts: [String] = ["{}", "[]", "null", #"{"id":7}"#, "{", #"{"id":7,"id":8}"#, open]
        texts.append(open + #","extra":[1,{"a":null}]}"#)
        texts.append(open + #","argv":["twice"]}"#)
        texts.append(" " + plain.replacing(",", with: " ,\n ") + " ")
        return texts
    }()

    @Test("odd job texts: extra members, a member twice, whitespace, not an object, cut short", arguments: oddJobTexts)
    func oddTexts(text: String) {
        Self.expectAgreement(text, Job.read)
    }

    @Test("attempts, as orchd writes them and altered", arguments: JobJSONSamples.attempts)
    func attempts(attempt: JobAttempt) throws {
        let text = try String(decoding: JSONEncoder().encode(attempt), as: UTF8.self)
        #expect(Self.fast(text, JobAttempt.read) == attempt)
        Self.expectAgreement(text, JobAttempt.read)
        let withBadStart = text.replacing(#""startedAt":null"#, with: #""startedAt":"not a time""#)
        Self.expectAgreement(withBadStart, JobAttempt.read)
        for key in ["attempt", "finishedAt", "result", "startedAt"] {
            let without = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)).filter { $0.key != key }
            Self.expectAgreement(String(decoding: try JSONEncoder().encode(without), as: UTF8.self), JobAttempt.read)
        }
    }

    @Test("JobsReply and JobReply are read whole, or left to JSONDecoder")
    func replies() throws {
        let jobs = Array(JobJSONSamples.jobs.prefix(20))
        let list = String(decoding: JobsInterface.JobsReply(jobs: jobs).jsonBytes, as: UTF8.self)
        let readList = try #require(Self.fast(list, JobsInterface.JobsReply.read))
        #expect(readList.jobs == (try JSONDecoder().decode(JobsInterface.JobsReply.self, from: Data(list.utf8))).jobs)
        #expect(Self.fast(#"{"jobs":[{}]}"#, JobsInterface.JobsReply.read) == nil)
        #expect(Self.fast("{}", JobsInterface.JobsReply.read) == nil)
        #expect(Self.fast(#"{"jobs":[],"more":1}"#, JobsInterface.JobsReply.read)?.jobs == [])
        for job in jobs {
            for reply in [
                JobsInterface.JobReply(job: job), JobsInterface.JobReply(job: job, existing: true),
                JobsInterface.JobReply(job: job, attempts: JobJSONSamples.attempts),
            ] {
                let text = String(decoding: reply.jsonBytes, as: UTF8.self)
                let read = try #require(Self.fast(text, JobsInterface.JobReply.read))
                #expect(read.job == (try JSONDecoder().decode(JobsInterface.JobReply.self, from: Data(text.utf8))).job)
                #expect(read.existing == reply.existing)
                #expect(read.attempts == reply.attempts)
            }
        }
        #expect(Self.fast(#"{"existing":true}"#, JobsInterface.JobReply.read) == nil)
    }

    @Test("GetInfo's counts are read as JSONDecoder reads them, or left to it", arguments: [
        #"{"jobs":{"waiting":0,"queued":1,"running":2,"finished":3},"version":"x","pid":9}"#,
        #"{"version":"x","jobs":{"finished":3,"running":2,"queued":1,"waiting":0,"extra":[1]}}"#,
        #"{"jobs":{"waiting":0,"queued":1,"running":2}}"#, #"{"jobs":{"waiting":0,"queued":1,"running":2,"finished":null}}"#,
        #"{"jobs":{"waiting":0,"queued":1,"running":2,"finished":1.5}}"#, #"{"jobs":null}"#, #"{}"#,
        #"{"jobs":{"waiting":0,"queued":1,"running":2,"finished":3,"finished":4}}"#,
        #"{"jobs":{"waiting":-1,"queued":9223372036854775807,"running":0,"finished":0}}"#,
    ])
    func counts(text: String) {
        if text.contains(#""finished":3"#) && !text.contains(#""finished":4"#) {
            #expect(Self.fast(text, ManagerInterface.JobCountsReply.read)?.jobs == JobCounts(waiting: 0, queued: 1, running: 2, finished: 3))
        }
        Self.expectAgreement(text, { ManagerInterface.JobCountsReply.read(&$0)?.jobs }, decoding: ManagerInterface.JobCountsReply.self, \.jobs)
    }

    @Test("a job without submittedAt is an error JSONDecoder throws, not a crash")
    func noSubmittedAt() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Job.self, from: Data(Self.altered("submittedAt", nil).utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Job.self, from: Data(Self.altered("submittedAt", "null").utf8))
        }
    }

    static let queues: [QueueInfo] = [
        QueueInfo(name: .default, concurrency: 2, paused: false, retryBaseUSec: 1_000_000, retryCapUSec: 60_000_000, jobs: JobCounts()),
        QueueInfo(
            name: QueueName(rawValue: "builds")!, concurrency: Int.max, paused: true, retryBaseUSec: 0, retryCapUSec: Int64.max,
            jobs: JobCounts(waiting: 1, queued: 2, running: 3, finished: 4), hooks: ["failed": #"notify "$ORCHD_JOB_ID" \ é"#],
            maxRunningPerUser: 2, runningPerUser: ["0": 1, "1000": 2], executor: "local"),
        QueueInfo(
            name: QueueName(rawValue: "hpc")!, concurrency: 16, paused: false, retryBaseUSec: 5, retryCapUSec: 10, jobs: JobCounts(),
            executor: "slurm", slurm: .init(partition: "debug", options: ["--mem=2G", "--time=1:00"], answered: false, lastError: "sbatch: error\n")),
        QueueInfo(
            name: QueueName(rawValue: "hpc2")!, concurrency: 1, paused: false, retryBaseUSec: 5, retryCapUSec: 10, jobs: JobCounts(),
            executor: "slurm", slurm: .init()),
    ]

    @Test("queues, as orchd writes them, read by hand to what JSONDecoder reads; altered ones agree or are left to it")
    func queueInfos() throws {
        for queue in Self.queues {
            let text = try String(decoding: JSONEncoder().encode(queue), as: UTF8.self)
            #expect(Self.fast(text, QueueInfo.read) == queue, "\(text)")
            let members = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
            for key in members.keys.sorted() + ["slurm"] {
                for value in [nil, JSONValue.null, .bool(true), .number(1), .number(-1), .string("x"), .array([]), .object([:]),
                              .object(["options": .array([])]), .object(["1": .number(2)]), .object(["waiting": .number(0)])] as [JSONValue?] {
                    var altered = members
                    altered[key] = value
                    let alteredText = try String(decoding: JSONEncoder().encode(altered), as: UTF8.self)
                    Self.expectAgreement(alteredText, QueueInfo.read)
                }
            }
        }
        let list = String(decoding: try JSONEncoder().encode(QueuesInterface.QueuesReply(queues: Self.queues)), as: UTF8.self)
        #expect(Self.fast(list, QueuesInterface.QueuesReply.read)?.queues == Self.queues)
        let one = String(decoding: try JSONEncoder().encode(QueuesInterface.QueueReply(queue: Self.queues[2])), as: UTF8.self)
        #expect(Self.fast(one, QueuesInterface.QueueReply.read)?.queue == Self.queues[2])
        #expect(Self.fast(#"{"queues":[{}]}"#, QueuesInterface.QueuesReply.read) == nil)
    }

    @Test("Logs' replies are read as JSONDecoder reads them, or left to it", arguments: [
        #"{"data":"aGVsbG8K","offset":6,"attempt":1}"#, #"{"offset":0,"data":""}"#, #"{"data":"","offset":0,"attempt":null}"#,
        #"{"data":"x\/y\u0041","offset":9223372036854775807,"extra":[1]}"#, #"{"data":"","offset":-1}"#, #"{"data":1,"offset":0}"#,
        #"{"data":"","offset":1.5}"#, #"{"data":""}"#, #"{"offset":0}"#, #"{"data":null,"offset":0}"#, #"{"data":"","offset":0,"offset":1}"#,
    ])
    func logsReply(text: String) {
        if text.hasPrefix(#"{"data":"aGVsbG8K""#) {
            #expect(Self.fast(text, JobsInterface.LogsReply.read)?.data == "aGVsbG8K")
        }
        Self.expectAgreement(text, { JobsInterface.LogsReply.read(&$0).map(LogsPart.init) }, decoding: JobsInterface.LogsReply.self, LogsPart.init)
    }

    /// A Logs reply's fields, comparable.
    struct LogsPart: Equatable {
        var data: String
        var offset: Int64
        var attempt: Int?
        init(_ reply: JobsInterface.LogsReply) {
            data = reply.data
            offset = reply.offset
            attempt = reply.attempt
        }
    }
}
