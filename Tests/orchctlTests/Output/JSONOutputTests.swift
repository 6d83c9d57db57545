import FoundationEssentials
import OrchestratorAPI
import Testing

@testable import orchctl

@Suite("JSON output")
struct JSONOutputTests {
    struct Sample: Encodable {
        var ids: [Int] = []
        var labels: [String: String] = [:]
        var name = "x"
    }

    @Test("empty arrays and objects print as [] and {}, at the top and nested")
    func emptyContainers() throws {
        #expect(try JSONOutput.text([Int]()) == "[]\n")
        let text = try JSONOutput.text([Sample()])
        #expect(text.contains("\"ids\" : [],"), "\(text)")
        #expect(text.contains("\"labels\" : {},"), "\(text)")
        #expect(!text.contains("\n\n"), "\(text)")
        #expect(try JSONOutput.text([1, 2]).contains("1,\n"))
    }

    /// Jobs with every optional field set or none, strings that need escaping, and numbers at
    /// their edges.
    static let jobs: [Job] = {
        let strings = ["", "plain", #"quote" back\slash"#, "nul\u{0} unit\u{1F} del\u{7F}", "tab\tline\ncr\r\u{8}\u{C}",
                       "é 漢字 👩‍👩‍👧 \u{2028}", "slash/path", "[{\"a\":1}]", ": , { } [ ]"]
        var jobs: [Job] = []
        for (index, text) in strings.enumerated() {
            var job = Job(
                id: JobID(rawValue: Int64(index + 1)),
                spec: JobSpec(
                    command: index % 2 == 0 ? .argv([text, "x", text]) : .shell(text), cwd: "/" + text, environment: ["E": text],
                    queue: QueueName(rawValue: "q-\(index)")!, priority: index == 0 ? Int.min : -5, name: text,
                    labels: [text: text, "k": text], after: [JobID(rawValue: 1), JobID(rawValue: .max)],
                    notBefore: Date(timeIntervalSince1970: 1_900_000_000.125), timeoutUSec: .max, maxAttempts: 3, uniqueKey: text),
                state: [JobState.waiting, .queued, .running, .finished(.failed(exitCode: .min)),
                        .finished(.spawnFailed(reason: text)), .finished(.dependencyFailed(JobID(rawValue: 7)))][index % 6],
                attempt: index, submittedAt: Date(timeIntervalSince1970: 1_795_000_000.5),
                startedAt: index % 3 == 0 ? nil : Date(timeIntervalSince1970: 1_795_000_001),
                finishedAt: index % 2 == 0 ? nil : Date(timeIntervalSince1970: 1_795_000_002.999), submitterUid: .max,
                pid: index % 2 == 0 ? Int32.max : nil, held: index % 2 == 0, suspended: index % 3 == 0)
            job.slurmJobId = index % 2 == 0 ? text : nil
            jobs.append(job)
        }
        jobs.append(Job(
            id: JobID(rawValue: 99), spec: JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), state: .queued,
            submittedAt: Date(timeIntervalSince1970: 0), submitterUid: 0))
        return jobs
    }()

    /// `value` through the general, `JSONEncoder` path: a generic function knows only `Encodable`.
    static func general<Value: Encodable>(_ value: Value) throws -> String {
        try JSONOutput.text(value)
    }

    @Test("jobs written by hand print exactly as JSONEncoder prints them: one job, several, none")
    func jobsAsEncoderPrintsThem() throws {
        for job in Self.jobs {
            let general = try Self.general(job)
            #expect(try JSONOutput.text(job) == general)
        }
        #expect(try JSONOutput.text(Self.jobs) == Self.general(Self.jobs))
        #expect(try JSONOutput.text([Job]()) == "[]\n")
        #expect(try JSONOutput.text([Self.jobs[0]]) == Self.general([Self.jobs[0]]))
    }

    @Test("the layout of compact text: nesting, empty containers, and punctuation inside strings left alone")
    func prettyPrinted() {
        #expect(JSONOutput.prettyPrinted(Array(#"{"a":[1,{"b":"x,y:[z]"}],"c":{},"d":[],"e":"\"{"}"#.utf8)) == """
            {
              "a" : [
                1,
                {
                  "b" : "x,y:[z]"
                }
              ],
              "c" : {},
              "d" : [],
              "e" : "\\"{"
            }
            """)
    }
}
