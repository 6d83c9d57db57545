import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("submit's job spec")
struct SubmitCommandTests {
    let console = CapturedConsole()

    func spec(_ arguments: [String], environment: [String: String] = ["PATH": "/bin", "NOTIFY_SOCKET": "/run/x"]) throws -> JobSpec {
        let parsed = try invocation(arguments)
        return try SubmitCommand.makeSpec(
            SubmitCommand.Options(decoding: parsed), trailing: parsed.trailing, context: testContext(console, environment: environment))
    }

    @Test("the spec captures argv, the caller's environment with overrides, and its directory")
    func capturesCallerContext() throws {
        let built = try spec(["submit", "--env", "FOO=bar", "--env", "PATH=/opt/bin", "--queue", "build",
                              "--priority", "3", "--name", "nightly", "--label", "team=infra", "--", "make", "-j4"])
        #expect(built.command == .argv(["make", "-j4"]))
        #expect(built.environment == ["PATH": "/opt/bin", "FOO": "bar"])
        #expect(built.cwd == "/tmp")
        #expect(built.queue.rawValue == "build")
        #expect(built.priority == 3)
        #expect(built.name == "nightly")
        #expect(built.labels == ["team": "infra"])
    }

    @Test("--shell runs a string; giving both forms is refused")
    func shell() throws {
        #expect(try spec(["submit", "--shell", "echo $HOME"]).command == .shell("echo $HOME"))
        #expect(throws: CommandLineError.self) { try spec(["submit", "--shell", "ls", "--", "ls"]) }
    }

    @Test("--cwd is made absolute and must be a directory")
    func workingDirectory() throws {
        #expect(try spec(["submit", "--cwd", "/", "--", "ls"]).cwd == "/")
        #expect(try spec(["submit", "--cwd", ".", "--", "ls"]).cwd == "/tmp")
        #expect(try spec(["submit", "--cwd", "../usr//bin/.", "--", "ls"]).cwd == "/usr/bin")
        #expect(SubmitCommand.normalized("/a/b/../../..") == "/")
        let error = #expect(throws: CommandLineError.self) { try spec(["submit", "--cwd", "/nonexistent-dir", "--", "ls"]) }
        #expect(error?.message == "invalid value for option '--cwd': /nonexistent-dir: No such file or directory")
        #expect(throws: CommandLineError.self) { try spec(["submit", "--cwd", "/etc/passwd", "--", "ls"]) }
        let empty = #expect(throws: CommandLineError.self) { try spec(["submit", "--cwd", "", "--", "ls"]) }
        #expect(empty?.message == "invalid value for option '--cwd': an empty path; leave --cwd out for the current directory")
    }

    @Test("--env with a name orchd would refuse (more than 30 combining marks in a row) is a usage error naming it")
    func envNotStreamSafe() {
        let name = "e" + String(repeating: "\u{0301}", count: 40)
        let error = #expect(throws: CommandLineError.self) { try spec(["submit", "--env", "\(name)=1", "--", "true"]) }
        #expect(error?.message == "invalid value for option '--env': the name '\(name)' has more than 30 combining marks in a row")
    }

    func spec(_ arguments: [String], now: Date, zone: LocalTimeZone) throws -> JobSpec {
        let parsed = try invocation(arguments)
        return try SubmitCommand.makeSpec(
            SubmitCommand.Options(decoding: parsed), trailing: parsed.trailing, context: testContext(console), now: now, zone: zone)
    }

    @Test("--after, --timeout, --retries and --unique fill the spec")
    func schedulingOptions() throws {
        let built = try spec(["submit", "--after", "3", "--after", "5", "--timeout", "1h30min", "--retries", "2",
                              "--unique", "nightly", "--", "make"])
        #expect(built.after == [JobID(rawValue: 3), JobID(rawValue: 5)])
        #expect(built.timeoutUSec == 5_400_000_000)
        #expect(built.maxAttempts == 3)
        #expect(built.uniqueKey == "nightly")
        let plain = try spec(["submit", "--", "true"])
        #expect(plain.maxAttempts == 1 && plain.after.isEmpty && plain.timeoutUSec == nil && plain.notBefore == nil && plain.uniqueKey == nil)
        #expect(try spec(["submit", "--retries", "999", "--", "true"]).maxAttempts == 1_000)
    }

    @Test("--delay and --at set notBefore; they exclude each other")
    func startTimes() throws {
        let utc = LocalTimeZone.fixed(secondsFromGMT: 0)
        #expect(try spec(["submit", "--delay", "5min", "--", "true"], now: referenceDate, zone: utc).notBefore
            == referenceDate.addingTimeInterval(300))
        #expect(try spec(["submit", "--at", "2026-12-01T08:00:00+01:00", "--", "true"], now: referenceDate, zone: utc).notBefore
            == Timestamp.parse("2026-12-01T07:00:00Z"))
        #expect(try spec(["submit", "--at", "06:30", "--", "true"], now: referenceDate, zone: .fixed(secondsFromGMT: -3_600)).notBefore
            == Timestamp.parse("2026-11-30T07:30:00Z"))
        let error = #expect(throws: CommandLineError.self) {
            try spec(["submit", "--delay", "5min", "--at", "08:00", "--", "true"], now: referenceDate, zone: utc)
        }
        #expect(error?.code == .conflictingOptions)
        #expect(error?.message == "give either --delay or --at, not both")
        let past = #expect(throws: CommandLineError.self) {
            try spec(["submit", "--at", "2026-11-01 08:00", "--", "true"], now: referenceDate, zone: utc)
        }
        #expect(past?.code == .invalidValue)
        #expect(past?.message.hasPrefix("invalid value for option '--at': 2026-11-01 08:00 has passed") == true)
    }

    @Test("a zero timeout, an empty unique key and --reuse without --unique are refused")
    func refusals() {
        let zero = #expect(throws: CommandLineError.self) { try spec(["submit", "--timeout", "0", "--", "true"]) }
        #expect(zero?.message == "invalid value for option '--timeout': it must be longer than zero")
        #expect(throws: CommandLineError.self) { try spec(["submit", "--unique", "", "--", "true"]) }
        let reuse = #expect(throws: CommandLineError.self) { try spec(["submit", "--reuse", "--", "true"]) }
        #expect(reuse?.message == "--reuse needs --unique <key>")
        #expect(throws: Never.self) { try spec(["submit", "--unique", "k", "--reuse", "--", "true"]) }
    }

    @Test("an empty command is refused")
    func empty() {
        #expect(throws: CommandLineError.self) { try spec(["submit", "--"]) }
        #expect(throws: CommandLineError.self) { try spec(["submit", "--shell", ""]) }
    }
}

@Suite("Batch environment")
struct BatchEnvironmentTests {
    @Test("the environment the specs share is sent once; a spec with another keeps its own")
    func sharing() {
        let common = ["PATH": "/bin", "HOME": "/root"]
        let specs = [
            JobSpec(command: .shell("a"), cwd: "/", environment: common),
            JobSpec(command: .shell("b"), cwd: "/", environment: ["X": "1"]),
            JobSpec(command: .shell("c"), cwd: "/", environment: common),
        ]
        let (shared, trimmed) = SubmitCommand.sharingEnvironment(specs)
        #expect(shared == common)
        #expect(trimmed.map(\.environment) == [[:], ["X": "1"], [:]])
        #expect(JobsInterface.SubmitBatchParameters(specs: trimmed, environment: shared).resolvedSpecs.map(\.environment)
            == specs.map(\.environment))
    }

    @Test("a line with an empty environment, or one equal to the shared one only as Swift strings, keeps its own", arguments: [
        [["X": "caf\u{E9}"], ["Y": "1"], [:]],
        [["X": "caf\u{E9}"], ["X": "cafe\u{301}"]],
        [[:], ["X": "1"]],
    ])
    func ownEnvironmentKept(environments: [[String: String]]) {
        let specs = environments.map { JobSpec(command: .shell("env"), cwd: "/", environment: $0) }
        let (shared, trimmed) = SubmitCommand.sharingEnvironment(specs)
        let resolved = JobsInterface.SubmitBatchParameters(specs: trimmed, environment: shared).resolvedSpecs
        for (sent, wanted) in zip(resolved, specs) {
            #expect(JobSpec.environmentsHaveSameBytes(sent.environment, wanted.environment), "\(sent.environment) for \(wanted.environment)")
        }
    }
}

@Suite("Reading the environment")
struct ProcessEnvironmentTests {
    /// Reads `entries` (raw bytes, as the kernel hands them over) as orchctl reads `environ`.
    static func read(_ entries: [[UInt8]]) -> ProcessEnvironment {
        let pointers = entries.map { bytes -> UnsafeMutablePointer<CChar> in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
            pointer[bytes.count] = 0
            return pointer
        }
        defer { pointers.forEach { $0.deallocate() } }
        var array: [UnsafeMutablePointer<CChar>?] = pointers + [nil]
        return array.withUnsafeMutableBufferPointer { ProcessEnvironment(reading: $0.baseAddress!) }
    }

    @Test("plain variables are read as they are, the first of a repeated name wins, and nothing is reported")
    func plain() {
        let read = Self.read([Array("A=1".utf8), Array("B=x=y".utf8), Array("A=2".utf8), Array("NOEQUALS".utf8), Array("E=".utf8)])
        #expect(read.variables == ["A": "1", "B": "x=y", "E": ""])
        #expect(read.changes.isEmpty)
    }

    @Test("a name with more than 30 combining marks in a row, which orchd refuses, is left out and reported; 30 are kept")
    func notStreamSafe() {
        let long = "x" + String(repeating: "\u{0301}", count: 31)
        let kept = "y" + String(repeating: "\u{0301}", count: 30)
        let read = Self.read([Array("\(long)=1".utf8), Array("\(kept)=2".utf8), Array("A=\(long)".utf8)])
        #expect(read.variables == [kept: "2", "A": long])
        #expect(read.changes == ["'\(long)' has more than 30 combining marks in a row, which orchd refuses in a name: the job does not get it"])
    }

    @Test("bytes that are not UTF-8, and a name equal to an earlier one only as a Swift string, are reported by name")
    func reported() {
        // A cut four-byte sequence is three bytes, as its U+FFFD is: same length, other bytes.
        let read = Self.read([
            Array("V=".utf8) + [0xFF, 0xFE], Array("caf\u{E9}=1".utf8), Array("cafe\u{301}=2".utf8),
            Array("W=a".utf8) + [0xF0, 0x9F, 0x98] + Array("b".utf8),
        ])
        #expect(read.variables["V"] == "\u{FFFD}\u{FFFD}")
        #expect(read.variables["W"] == "a\u{FFFD}b")
        #expect(read.variables.count == 3)
        #expect(read.changes.count == 3, "\(read.changes)")
        #expect(read.changes.contains { $0.hasPrefix("'W' is not valid UTF-8") })
        #expect(read.changes.contains { $0.hasPrefix("'V' is not valid UTF-8") })
        #expect(read.changes.contains { $0.contains("the job gets only the first") })
    }
}
