import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("submit --batch files")
struct BatchFileTests {
    let defaults = JobSpec(
        command: .shell("true"), cwd: "/tmp", environment: ["PATH": "/bin", "HOME": "/home/test"],
        queue: QueueName(rawValue: "build")!, priority: 2, labels: ["team": "infra"], maxAttempts: 3)

    @Test("shell lines, JSON lines, comments and blank lines")
    func lines() throws {
        let text = """
            # nightly jobs

            make -C lib test
               echo indented   \r
            {"argv": ["convert", "a b.png", "b.jpg"]}
            \t# an indented comment
            {"shell": "exit 3", "priority": 9, "queue": "io", "cwd": "/", "environment": {"A": "1"}, "timeoutUSec": 3600000000}
            """
        let specs = try BatchFile.parse(text, defaults: defaults)
        try #require(specs.count == 4)
        #expect(specs[0].command == .shell("make -C lib test"))
        #expect(specs[1].command == .shell("echo indented"))
        #expect(specs[2].command == .argv(["convert", "a b.png", "b.jpg"]))
        #expect(specs[3].command == .shell("exit 3"))
        // Defaults apply to shell lines and to JSON lines that do not say otherwise.
        for spec in specs.prefix(3) {
            #expect(spec.queue.rawValue == "build")
            #expect(spec.priority == 2)
            #expect(spec.cwd == "/tmp")
            #expect(spec.environment == ["PATH": "/bin", "HOME": "/home/test"])
            #expect(spec.labels == ["team": "infra"])
            #expect(spec.maxAttempts == 3)
        }
        // A JSON line's fields replace the defaults.
        #expect(specs[3].priority == 9)
        #expect(specs[3].queue.rawValue == "io")
        #expect(specs[3].cwd == "/")
        #expect(specs[3].environment == ["A": "1"])
        #expect(specs[3].timeoutUSec == 3_600_000_000)
        #expect(specs[3].labels == ["team": "infra"])
        #expect(specs[3].maxAttempts == 3)
    }

    @Test("a JSON line's own cwd must be a directory, as --cwd must; each is checked once and the error names the line")
    func workingDirectories() throws {
        let text = """
            {"argv": ["true"], "cwd": "/"}
            {"argv": ["true"], "cwd": "/nonexistent-orchd-dir"}
            {"argv": ["true"], "cwd": "/etc/passwd"}
            {"argv": ["true"], "cwd": "/nonexistent-orchd-dir"}
            """
        let error = #expect(throws: BatchFileError.self) { try BatchFile.parse(text, defaults: defaults) }
        #expect(error?.problems.map(\.line) == [2, 3, 4])
        #expect(error?.problems.first?.message == "field 'cwd': /nonexistent-orchd-dir: No such file or directory")
        #expect(error?.problems.dropFirst().first?.message == "field 'cwd': /etc/passwd is not a directory")
        #expect(try BatchFile.parse(#"{"argv": ["true"], "cwd": "/usr"}"#, defaults: defaults).first?.cwd == "/usr")
    }

    @Test("a byte order mark before the first line is not part of it: a JSON line after one is still a JSON line")
    func byteOrderMark() throws {
        let specs = try BatchFile.parse("\u{FEFF}{\"argv\": [\"true\"]}\r\n\u{FEFF}echo kept", defaults: defaults)
        try #require(specs.count == 2)
        #expect(specs[0].command == .argv(["true"]))
        // Only the file's first character is a byte order mark; one later belongs to its line.
        #expect(specs[1].command == .shell("\u{FEFF}echo kept"))
        #expect(try BatchFile.parse("\u{FEFF}", defaults: defaults).isEmpty)
    }

    @Test("a JSON line without an environment, or with an empty one, gets the caller's; another is its own, byte for byte")
    func environments() throws {
        let text = #"""
            {"shell": "env"}
            {"shell": "env", "environment": {}}
            {"shell": "env", "environment": {"X": "cafe\u0301"}}
            """#
        let specs = try BatchFile.parse(text, defaults: defaults)
        #expect(specs[0].environment == defaults.environment)
        #expect(specs[1].environment == defaults.environment)
        #expect(Array(try #require(specs[2].environment["X"]).utf8) == Array("cafe\u{301}".utf8))
    }

    @Test("JSON lines carry every spec field")
    func jsonFields() throws {
        let line = #"{"argv": ["x"], "after": [4, 5], "notBefore": "2026-12-01T08:00:00Z", "maxAttempts": 1, "uniqueKey": "k", "name": "n", "labels": {}}"#
        let spec = try #require(try BatchFile.parse(line, defaults: defaults).first)
        #expect(spec.after == [JobID(rawValue: 4), JobID(rawValue: 5)])
        #expect(spec.notBefore == Timestamp.parse("2026-12-01T08:00:00Z"))
        #expect(spec.maxAttempts == 1)
        #expect(spec.uniqueKey == "k")
        #expect(spec.name == "n")
        #expect(spec.labels.isEmpty)
    }

    @Test("bad lines are reported with their line numbers and nothing is returned")
    func badLines() {
        let text = """
            echo fine
            {"argv": "not an array"}
            # fine
            {not json
            {"shell": "x", "delay": "5s"}
            {"argv": ["cut", "short"
            {"priority": 1}
            {"shell": "x", "cwd": "relative"}
            {"shell": "x", "maxAttempts": 0}
            """
        let error = #expect(throws: BatchFileError.self) { try BatchFile.parse(text, defaults: defaults) }
        #expect(error?.problems.map(\.line) == [2, 4, 5, 6, 7, 8, 9])
        #expect(error?.problems[0].message == "field 'argv' is not an array")
        #expect(error?.problems[1].message == "not valid JSON (a line cut short, or a stray character?)")
        #expect(error?.problems[2].message.hasPrefix("unknown field 'delay'") == true)
        #expect(error?.problems[3].message == "not valid JSON (a line cut short, or a stray character?)")
        #expect(error?.problems[4].message == #"give the command as "argv" or "shell""#)
        #expect(error?.problems[5].message == "the working directory must be an absolute path, not 'relative'")
        #expect(error?.description.hasPrefix("line 2: field 'argv' is not an array\nError: line 4: not valid JSON") == true)
        #expect(error?.description.hasSuffix("\nNothing was submitted.") == true)
    }

    @Test("a number past what a Double holds is refused naming its field (an integer field's range), not taken for JSON that is not valid")
    func numbersPastADouble() {
        let digits = String(repeating: "9", count: 400)
        let text = """
            {"argv": ["true"], "priority": 1e309}
            {"argv": ["true"], "priority": \(digits)}
            {"argv": ["true"], "timeoutUSec": -1e400}
            {"argv": ["true"], "labels": {"a": "b"}, "extra": [1, {"y": 1e999}]}
            """
        let error = #expect(throws: BatchFileError.self) { try BatchFile.parse(text, defaults: defaults) }
        #expect(error?.problems.map(\.line) == [1, 2, 3, 4])
        let range = "must be a whole number from \(Int64.min) to \(Int64.max), written in digits, not"
        #expect(error?.problems[0].message == "field 'priority' \(range) 1e309")
        #expect(error?.problems[1].message == "field 'priority' \(range) \(digits.prefix(37))...")
        #expect(error?.problems[2].message == "field 'timeoutUSec' \(range) -1e400")
        #expect(error?.problems[3].message == "'extra.1.y' is a number too large to read: 1e999")
    }

    @Test("a JSON line that gives a field or name twice is refused naming it, not read with one value dropped")
    func repeatedNames() {
        let text = """
            {"argv": ["true"], "argv": ["false"]}
            {"argv": ["true"], "environment": {"A": "1", "A": "2"}}
            {"argv": ["true"], "labels": {"\\u00e9": "1", "e\\u0301": "2"}}
            {"argv": ["true"], "labels": {"a": "1", "b": "1"}}
            {"argv": ["true"], "labels": {"k": "v",}, "environment": {"A": "1", "A": "2"}}
            {"argv": ["true"], "labels": {"a\(String(repeating: "\u{301}", count: 31))": "1"}}
            """
        let error = #expect(throws: BatchFileError.self) { try BatchFile.parse(text, defaults: defaults) }
        #expect(error?.problems.map(\.line) == [1, 2, 3, 5, 6])
        #expect(error?.problems[0].message == "'argv' is given twice (or as two names Unicode holds equal)")
        #expect(error?.problems[1].message == "'environment.A' is given twice (or as two names Unicode holds equal)")
        #expect(error?.problems[2].message.hasPrefix("'labels.") == true)
        // A trailing comma, which JSONDecoder takes, is not JSON.
        #expect(error?.problems[3].message == "not valid JSON (a line cut short, or a stray character?)")
        #expect(error?.problems[4].message == "a name has more than 30 combining marks in a row")
    }

    @Test("an empty file or one of comments only has no jobs")
    func empty() throws {
        #expect(try BatchFile.parse("", defaults: defaults).isEmpty)
        #expect(try BatchFile.parse("# only\n\n  \n", defaults: defaults).isEmpty)
    }

    @Test("submit's options become the defaults; --batch refuses a command, --unique, --reuse and --wait")
    func defaultsFromOptions() throws {
        let capture = CapturedConsole()
        let parsed = try invocation(["submit", "--batch", "-", "--queue", "io", "--retries", "2", "--timeout", "1min", "--after", "7"])
        let template = try SubmitCommand.defaults(
            SubmitCommand.Options(decoding: parsed), trailing: parsed.trailing, context: testContext(capture), command: .shell("true"))
        let spec = try #require(try BatchFile.parse("echo hi", defaults: template).first)
        #expect(spec.queue.rawValue == "io")
        #expect(spec.maxAttempts == 3)
        #expect(spec.timeoutUSec == 60_000_000)
        #expect(spec.after == [JobID(rawValue: 7)])
        #expect(spec.cwd == "/tmp")
        for extra in [["--shell", "x"], ["--unique", "k"], ["--wait"], ["--", "ls"]] {
            let refused = try invocation(["submit", "--batch", "-"] + extra)
            #expect(throws: CommandLineError.self) {
                try SubmitCommand.defaults(
                    SubmitCommand.Options(decoding: refused), trailing: refused.trailing, context: testContext(capture), command: .shell("true"))
            }
        }
    }

    @Test("a batch file that cannot be read is a usage error")
    func unreadable() {
        let error = #expect(throws: CommandLineError.self) { try BatchFile.read("/nonexistent/jobs.txt") }
        #expect(error?.message == "invalid value for option '--batch': /nonexistent/jobs.txt: No such file or directory")
        let empty = #expect(throws: CommandLineError.self) { try BatchFile.read("") }
        #expect(empty?.message == "invalid value for option '--batch': the path is empty (a file, or - for standard input)")
    }

    @Test("a spec over the limit is said to be over it: in MiB, and in bytes where a tenth of a MiB would not show it")
    func oversizedMessages() {
        #expect(BatchSplitter.oversizedMessage(2 << 20) == "the job spec is 2.0 MiB; the limit is 1 MiB (orchd refuses larger calls)")
        #expect(BatchSplitter.oversizedMessage(1_050_000) == "the job spec is 1.1 MiB; the limit is 1 MiB (orchd refuses larger calls)")
        #expect(BatchSplitter.oversizedMessage(1_046_000)
            == "the job spec is 1,046,000 bytes; the limit is 1,044,480 (a call is at most 1 MiB: orchd refuses larger ones)")
    }
}

@Suite("Batch splitting")
struct BatchSplitterTests {
    func spec(_ shell: String, environment: [String: String] = [:]) -> JobSpec {
        JobSpec(command: .shell(shell), cwd: "/tmp", environment: environment)
    }

    @Test("at most 2,000 specs a call")
    func byCount() {
        let specs = Array(repeating: spec("true"), count: 4_500)
        #expect(BatchSplitter.chunks(specs) == [0..<2_000, 2_000..<4_000, 4_000..<4_500])
        #expect(BatchSplitter.chunks([]) == [])
        #expect(BatchSplitter.chunks([spec("true")]) == [0..<1])
    }

    @Test("at most about 512 KiB a call")
    func bySize() {
        // ~3 KiB of environment each: far fewer than 2,000 fit.
        let environment = Dictionary(uniqueKeysWithValues: (0..<30).map { ("VARIABLE_\($0)", String(repeating: "v", count: 90)) })
        let specs = Array(repeating: spec("make", environment: environment), count: 1_000)
        let chunks = BatchSplitter.chunks(specs)
        #expect(chunks.count > 1)
        #expect(chunks.first?.lowerBound == 0 && chunks.last?.upperBound == 1_000)
        for (a, b) in zip(chunks, chunks.dropFirst()) { #expect(a.upperBound == b.lowerBound) }
        for chunk in chunks {
            #expect(chunk.reduce(0) { $0 + BatchSplitter.estimatedBytes(specs[$1]) } <= BatchSplitter.maximumBytes)
        }
        // A spec bigger than the limit travels alone.
        let huge = spec(String(repeating: "x", count: 600_000))
        #expect(BatchSplitter.chunks([spec("a"), huge, spec("b")]) == [0..<1, 1..<2, 2..<3])
    }

    @Test("a chunk with a spec that uses the shared environment counts it once; one without does not, and its call leaves it out")
    func sharedEnvironment() {
        let shared = ["BIG": String(repeating: "e", count: 300_000)]
        let own = spec(String(repeating: "b", count: 300_000), environment: ["PATH": "/bin"])
        let sharing = spec("true")
        // 300 KB of its own, then 300 KB shared: over 512 KiB together, so two calls.
        #expect(BatchSplitter.chunks([own, sharing], sharedEnvironment: shared) == [0..<1, 1..<2])
        #expect(BatchSplitter.chunks([own, sharing]) == [0..<2], "without sharing, only the specs count")
        // Many specs that share it pay for it once.
        #expect(BatchSplitter.chunks(Array(repeating: sharing, count: 100), sharedEnvironment: shared) == [0..<100])
        #expect(!BatchSplitter.usesShared([own][...]))
        #expect(BatchSplitter.usesShared([own, sharing][...]))
    }

    @Test("the estimate is never below the encoded size", arguments: [
        "plain", "quotes \" and \\ backslashes / slashes", "control \u{1}\u{7f}\n\t", "unicode ✓ 日本語",
    ])
    func estimateIsUpperBound(text: String) throws {
        let full = JobSpec(
            command: .argv([text, text]), cwd: "/tmp/" + text, environment: ["K": text, text: "v"],
            priority: -12_345, name: text, labels: [text: text], after: [JobID(rawValue: Int64.max)],
            notBefore: referenceDate, timeoutUSec: Int64.max, maxAttempts: 1_000, uniqueKey: text)
        let encoded = try JSONEncoder().encode(JobsInterface.SubmitBatchParameters(specs: [full]))
        #expect(BatchSplitter.estimatedBytes(full) >= encoded.count)
    }

    @Test("a spec is refused as too large only when its JSON is, whatever the quick bound says", arguments: [
        // Under the limit even at six bytes a byte: decided without reading a byte.
        (String(repeating: "x", count: 1_000), false),
        // Over the limit at six bytes a byte, under it as written: the exact count decides.
        (String(repeating: "x", count: 400_000), false),
        // Control bytes are written as six each (`\u0001`): 200,000 of them pass 1 MiB.
        (String(repeating: "\u{1}", count: 200_000), true),
        (String(repeating: "x", count: 1_100_000), true),
    ])
    func oversizedSpec(text: String, refused: Bool) throws {
        let oversized = BatchSplitter.oversizedBytes(spec("echo", environment: ["V": text]))
        #expect((oversized != nil) == refused)
        let encoded = try JSONEncoder().encode(spec("echo", environment: ["V": text])).count
        #expect((encoded > BatchSplitter.maximumSpecBytes) == refused)
        if let oversized { #expect(oversized == encoded) }
    }
}
