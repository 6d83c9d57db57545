import FoundationEssentials
import OrchestratorAPI

/// Jobs and attempts covering every state, result, optional field and awkward string, for the
/// tests that compare ``JSONByteEncodable`` output with `JSONEncoder`'s.
enum JobJSONSamples {
    /// Strings that need escaping, or look as if they did.
    static let hostileStrings: [String] = [
        "", "plain", #"quote"inside"#, #"back\slash"#, #"\""#, "\u{0}", "nul\u{0}mid", "\u{1F}",
        String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7F}", "\u{2028}\u{2029}",
        "emoji 👩‍👩‍👧‍👦 🙂", "CJK 漢字かな한국어", #"\uD800"#, #"\u0000"#, "slash/path//", "</script>",
        "e\u{301}", "\r\n\t\u{8}\u{C}", "\u{FEFF}bom", "\u{10FFFF}", "\u{80}\u{9F}\u{A0}", "null", "true", "0",
        String(repeating: "long ", count: 200),
    ]

    /// Every state, each result included.
    static let states: [JobState] = [
        .waiting, .queued, .running, .finished(.succeeded), .finished(.failed(exitCode: 3)),
        .finished(.failed(exitCode: .max)), .finished(.failed(exitCode: .min)), .finished(.signaled(signal: 9)),
        .finished(.timedOut), .finished(.cancelled), .finished(.spawnFailed(reason: "command not found: x")),
        .finished(.spawnFailed(reason: "")), .finished(.dependencyFailed(JobID(rawValue: 7))),
        .finished(.dependencyFailed(JobID(rawValue: .max))), .finished(.interrupted),
    ]

    /// Times around the edges of the format: the epoch, before it, sub-millisecond fractions
    /// that round, the last representable year.
    static let dates: [Date] = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: -0.0005),
        Date(timeIntervalSince1970: 1_795_000_000.497), Date(timeIntervalSince1970: 1_795_000_000.9999),
        Timestamp.parse("0001-01-01T00:00:00Z")!, Timestamp.parse("9999-12-31T23:59:59.999Z")!,
        Timestamp.parse("2024-02-29T12:00:00.001Z")!,
    ]

    static let builds = QueueName(rawValue: "builds")!

    /// A job with nothing optional set.
    static func minimal(state: JobState = .queued) -> Job {
        Job(
            id: JobID(rawValue: 1), spec: JobSpec(command: .argv(["true"]), cwd: "/", environment: [:]), state: state,
            submittedAt: Date(timeIntervalSince1970: 1_795_000_000), submitterUid: 0)
    }

    /// A job with every optional field set.
    static func full(state: JobState, command: JobCommand = .argv(["printf", "%s|", "a b", "", "*", "$HOME"])) -> Job {
        var job = Job(
            id: JobID(rawValue: 42),
            spec: JobSpec(
                command: command, cwd: "/tmp", environment: ["SECRET": "hidden", "PATH": "/bin"], queue: builds,
                priority: -5, name: "nightly", labels: ["team": "infra", "a": "1", "zz": ""],
                after: [JobID(rawValue: 1), JobID(rawValue: .max)], notBefore: Timestamp.parse("2030-01-02T03:04:05.123Z"),
                timeoutUSec: 90_000_000, maxAttempts: 3, uniqueKey: "nightly-build"),
            state: state, attempt: 2, submittedAt: Timestamp.parse("2026-11-29T12:00:00.125Z")!,
            startedAt: Timestamp.parse("2026-11-29T12:00:01Z"), finishedAt: state.isFinished ? Timestamp.parse("2026-11-29T12:00:02.5Z") : nil,
            submitterUid: 1000, pid: state == .running ? 4242 : nil, held: state == .waiting, suspended: state == .running)
        job.slurmJobId = state == .running ? "123456" : nil
        return job
    }

    /// One job per hostile string, the string in every string field.
    static func hostile(_ text: String) -> [Job] {
        var argv = full(state: .finished(.spawnFailed(reason: text)), command: .argv([text, text, "x"]))
        argv.spec.cwd = text
        argv.spec.name = text
        argv.spec.labels = [text: text]
        argv.spec.uniqueKey = text
        argv.slurmJobId = text
        var shell = full(state: .running, command: .shell(text))
        shell.spec.labels = ["k": text, "k2": text]
        return [argv, shell]
    }

    /// Numbers at the edges of their types.
    static let extremes: [Job] = {
        var big = full(state: .running)
        big.id = JobID(rawValue: .max)
        big.attempt = .max
        big.submitterUid = .max
        big.pid = .max
        big.spec.priority = .min
        big.spec.maxAttempts = .max
        big.spec.timeoutUSec = .max
        var small = full(state: .finished(.signaled(signal: .min)))
        small.spec.priority = .max
        small.spec.timeoutUSec = .min
        small.pid = .min
        small.spec.after = []
        small.spec.labels = [:]
        return [big, small]
    }()

    /// The whole catalogue.
    static let jobs: [Job] = {
        var jobs = states.flatMap { state in
            [minimal(state: state), full(state: state), full(state: state, command: .shell("echo hi && exit 3"))]
        }
        jobs += hostileStrings.flatMap(hostile)
        jobs += extremes
        jobs += dates.map { date in
            var job = full(state: .finished(.succeeded))
            job.submittedAt = date
            job.startedAt = date
            job.finishedAt = date
            job.spec.notBefore = date
            return job
        }
        return jobs
    }()

    /// Attempts with every result, with and without their optional fields.
    static let attempts: [JobAttempt] = states.compactMap(\.result).flatMap { result in
        [
            JobAttempt(attempt: 1, startedAt: nil, finishedAt: Date(timeIntervalSince1970: 1_795_000_000.25), result: result),
            JobAttempt(
                attempt: .max, startedAt: Date(timeIntervalSince1970: 1_795_000_000), finishedAt: Date(timeIntervalSince1970: 1_795_000_010),
                result: result, slurmJobId: "77\u{0}\"x"),
        ]
    }
}
