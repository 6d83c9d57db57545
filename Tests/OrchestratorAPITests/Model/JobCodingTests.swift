import FoundationEssentials
import OrchestratorAPI
import Testing

@Suite("Job and JobSpec JSON")
struct JobCodingTests {
    private func sampleJob(state: JobState) -> Job {
        Job(
            id: JobID(rawValue: 42),
            spec: JobSpec(
                command: .argv(["printf", "%s|", "a b", "", "*", "$HOME"]), cwd: "/tmp",
                environment: ["SECRET": "hidden"], queue: QueueName(rawValue: "builds")!, priority: 5,
                name: "nightly", labels: ["team": "infra"]),
            state: state, attempt: 1,
            submittedAt: Timestamp.parse("2026-11-29T12:00:00.125Z")!,
            startedAt: Timestamp.parse("2026-11-29T12:00:01Z"), finishedAt: Timestamp.parse("2026-11-29T12:00:02Z"),
            submitterUid: 1000)
    }

    private func object(_ job: Job) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(job))
    }

    @Test("the job object has the documented lowerCamel fields and no environment")
    func fieldNames() throws {
        let fields = try object(sampleJob(state: .finished(.failed(exitCode: 3))))
        let documented: Set<String> = [
            "id", "name", "state", "result", "exitCode", "signal", "reason", "failedDependency", "queue", "priority",
            "argv", "shell", "cwd", "after", "attempt", "maxAttempts", "submittedAt", "startedAt", "finishedAt",
            "submitterUid", "labels", "pid", "notBefore", "timeoutUSec", "uniqueKey", "held", "suspended",
        ]
        #expect(Set(fields.keys) == documented)
        #expect(fields["state"] == .string("finished"))
        #expect(fields["result"] == .string("failed"))
        #expect(fields["exitCode"] == .integer(3))
        #expect(fields["submittedAt"] == .string("2026-11-29T12:00:00.125Z"))
    }

    @Test("every state and result survives encoding and decoding", arguments: [
        JobState.waiting, .queued, .running, .finished(.succeeded), .finished(.failed(exitCode: 3)),
        .finished(.signaled(signal: 9)), .finished(.timedOut), .finished(.cancelled),
        .finished(.spawnFailed(reason: "command not found: x")), .finished(.dependencyFailed(JobID(rawValue: 7))),
        .finished(.interrupted),
    ])
    func roundTrip(state: JobState) throws {
        var job = sampleJob(state: state)
        let decoded = try JSONDecoder().decode(Job.self, from: JSONEncoder().encode(job))
        // The environment is deliberately not part of the JSON.
        job.spec.environment = [:]
        #expect(decoded == job)
    }

    @Test("a spec needs exactly one of argv and shell")
    func specCommandIsExclusive() {
        let both = #"{"argv":["true"],"shell":"true","cwd":"/"}"#
        let neither = #"{"cwd":"/"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JobSpec.self, from: Data(both.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JobSpec.self, from: Data(neither.utf8)) }
    }

    @Test("supervisor variables never reach a job's environment")
    func supervisorVariablesRemoved() throws {
        let json = #"{"argv":["env"],"cwd":"/","environment":{"NOTIFY_SOCKET":"/run/x","LISTEN_FDS":"1","KEEP":"yes"}}"#
        let spec = try JSONDecoder().decode(JobSpec.self, from: Data(json.utf8))
        #expect(spec.environment == ["KEEP": "yes"])
    }

    @Test("validation names the broken rule")
    func validation() throws {
        let empty = JobSpec(command: .argv([]), cwd: "/", environment: [:])
        #expect(throws: JobSpecError.emptyCommand) { try empty.validate() }
        let relative = JobSpec(command: .shell("true"), cwd: "tmp", environment: [:])
        #expect(throws: JobSpecError.relativeWorkingDirectory("tmp")) { try relative.validate() }
        let nul = JobSpec(command: .argv(["a\u{0}b"]), cwd: "/", environment: [:])
        #expect(throws: JobSpecError.nulByte(field: "argv")) { try nul.validate() }
        // Every string, as the error's documentation says: a name, label or unique key too
        // (only the protocol can carry a NUL there; the command line cannot).
        let nulName = JobSpec(command: .shell("true"), cwd: "/", environment: [:], name: "a\u{0}")
        #expect(throws: JobSpecError.nulByte(field: "name")) { try nulName.validate(environmentAlreadyValid: true) }
        let nulLabel = JobSpec(command: .shell("true"), cwd: "/", environment: [:], labels: ["k": "\u{0}"])
        #expect(throws: JobSpecError.nulByte(field: "labels")) { try nulLabel.validate() }
        let nulLabelKey = JobSpec(command: .shell("true"), cwd: "/", environment: [:], labels: ["\u{0}": "v"])
        #expect(throws: JobSpecError.nulByte(field: "labels")) { try nulLabelKey.validate() }
        let nulKey = JobSpec(command: .shell("true"), cwd: "/", environment: [:], uniqueKey: "x\u{0}")
        #expect(throws: JobSpecError.nulByte(field: "uniqueKey")) { try nulKey.validate() }
        let badName = JobSpec(command: .shell("true"), cwd: "/", environment: ["A=B": "c"])
        #expect(throws: JobSpecError.invalidEnvironmentName("A=B")) { try badName.validate() }
        // A label key as `--label key=value` can give it: not empty, no '='.
        for key in ["", "a=b", "="] {
            let badLabel = JobSpec(command: .shell("true"), cwd: "/", environment: [:], labels: [key: "v"])
            #expect(throws: JobSpecError.invalidLabelKey(key)) { try badLabel.validate() }
            #expect(throws: JobSpecError.invalidLabelKey(key)) { try badLabel.validate(environmentAlreadyValid: true) }
        }
        try JobSpec(command: .shell("true"), cwd: "/", environment: [:], labels: ["team": "", "é": "a=b"]).validate()
    }

    @Test("an environment validated before is skipped, and only it: the command, cwd and the rest are still checked")
    func validationOfASharedEnvironment() throws {
        let badName = JobSpec(command: .shell("true"), cwd: "/", environment: ["A=B": "c"])
        #expect(throws: JobSpecError.invalidEnvironmentName("A=B")) { try badName.validate(environmentAlreadyValid: false) }
        try badName.validate(environmentAlreadyValid: true)
        let relative = JobSpec(command: .shell("true"), cwd: "tmp", environment: [:])
        #expect(throws: JobSpecError.relativeWorkingDirectory("tmp")) { try relative.validate(environmentAlreadyValid: true) }
        let empty = JobSpec(command: .argv([]), cwd: "/", environment: [:])
        #expect(throws: JobSpecError.emptyCommand) { try empty.validate(environmentAlreadyValid: true) }
        // One dictionary is itself; an equal copy is another dictionary.
        let shared = ["PATH": "/bin"]
        #expect(JobSpec.isSameDictionary(shared, shared))
        #expect(!JobSpec.isSameDictionary(shared, Dictionary(uniqueKeysWithValues: [("PATH", "/bin")])))
    }

    @Test("queue names follow the documented rule", arguments: [
        ("default", true), ("builds.nightly-2_x", true), ("", false), (".hidden", false), ("-x", false),
        ("has space", false), (String(repeating: "q", count: 65), false), (String(repeating: "q", count: 64), true),
    ])
    func queueNames(name: String, valid: Bool) {
        #expect((QueueName(rawValue: name) != nil) == valid)
    }

    @Test("exit statuses follow the shell's conventions")
    func shellExitStatus() {
        #expect(JobResult.succeeded.shellExitStatus == 0)
        #expect(JobResult.failed(exitCode: 3).shellExitStatus == 3)
        #expect(JobResult.signaled(signal: 9).shellExitStatus == 137)
        #expect(JobResult.timedOut.shellExitStatus == 124)
        #expect(JobResult.spawnFailed(reason: "").shellExitStatus == 127)
        #expect(JobResult.cancelled.shellExitStatus == 1)
    }
}

@Suite("SubmitBatch environment sharing")
struct SubmitBatchEnvironmentTests {
    @Test("specs without an environment take the batch's, supervisor variables removed; others keep theirs")
    func resolvedSpecs() {
        let bare = JobSpec(command: .shell("true"), cwd: "/", environment: [:])
        let own = JobSpec(command: .shell("true"), cwd: "/", environment: ["OWN": "1"])
        let parameters = JobsInterface.SubmitBatchParameters(
            specs: [bare, own], environment: ["SHARED": "yes", "NOTIFY_SOCKET": "/run/x"])
        let resolved = parameters.resolvedSpecs
        #expect(resolved[0].environment == ["SHARED": "yes"])
        #expect(resolved[1].environment == ["OWN": "1"])
    }
}
