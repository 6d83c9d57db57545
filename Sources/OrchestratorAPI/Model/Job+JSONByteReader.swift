import FoundationEssentials

/// Jobs are read from replies without `JSONDecoder` when the reply is plain: the first
/// `JSONDecoder` use of a one-call command (`status`, `show`, `cancel`) instantiated the
/// coder's generic machinery for every type a job holds, most of that command's work past
/// start-up. Each reader accepts only what ``Job/init(from:)`` (or ``JobAttempt/init(from:)``)
/// decodes to the same value, and gives up (`nil`) on anything else, which then goes to
/// `JSONDecoder`: its errors stay the coder's.
extension Job {
    /// Reads a job as ``init(from:)`` decodes it, or gives up (`nil`).
    @Sendable public static func read(_ reader: inout JSONByteReader) -> Job? {
        var id: Int64?, cwd: String?, queue: String?, priority: Int64?, maxAttempts: Int64?, attempt: Int64?
        var submitterUid: Int64?, stateName: String?, submittedAt: Date?
        var argv: [String]?, shell: String?, name: String?, labels: [String: String]?, after: [JobID]?
        var notBefore: Date?, timeoutUSec: Int64?, uniqueKey: String?, startedAt: Date?, finishedAt: Date?, pid: Int64?
        var slurmJobId: String?, held: Bool?, suspended: Bool?
        var members = JobResultMembers()
        let ok = reader.object { key, reader in
            if let taken = members.read(key, &reader) { return taken }
            switch key {
            case "id": return reader.required(&id) { $0.integer() }
            case "cwd": return reader.required(&cwd) { $0.string() }
            case "queue": return reader.required(&queue) { $0.string() }
            case "priority": return reader.required(&priority) { $0.integer() }
            case "maxAttempts": return reader.required(&maxAttempts) { $0.integer() }
            case "attempt": return reader.required(&attempt) { $0.integer() }
            case "submitterUid": return reader.required(&submitterUid) { $0.integer() }
            case "state": return reader.required(&stateName) { $0.string() }
            case "submittedAt": return reader.required(&submittedAt) { $0.string().flatMap(Timestamp.parse) }
            case "argv": return reader.nullable(&argv) { $0.list { $0.string() } }
            case "shell": return reader.nullable(&shell) { $0.string() }
            case "name": return reader.nullable(&name) { $0.string() }
            case "labels": return reader.nullable(&labels) { $0.stringMap() }
            case "after": return reader.nullable(&after) { $0.list { $0.integer().map(JobID.init(rawValue:)) } }
            case "notBefore": return reader.nullable(&notBefore) { $0.string().flatMap(Timestamp.parse) }
            case "timeoutUSec": return reader.nullable(&timeoutUSec) { $0.integer() }
            case "uniqueKey": return reader.nullable(&uniqueKey) { $0.string() }
            case "startedAt": return reader.nullable(&startedAt) { $0.string().flatMap(Timestamp.parse) }
            case "finishedAt": return reader.nullable(&finishedAt) { $0.string().flatMap(Timestamp.parse) }
            case "pid": return reader.nullable(&pid) { $0.integer() }
            case "slurmJobId": return reader.nullable(&slurmJobId) { $0.string() }
            case "held": return reader.nullable(&held) { $0.bool() }
            case "suspended": return reader.nullable(&suspended) { $0.bool() }
            default: return reader.skipValue()
            }
        }
        // Integers must fit their fields, as JSONDecoder requires; a queue name must be valid.
        guard ok, let id, let cwd, let queue = queue.flatMap(QueueName.init(rawValue:)),
              let priority = priority.flatMap({ Int(exactly: $0) }), let maxAttempts = maxAttempts.flatMap({ Int(exactly: $0) }),
              let attempt = attempt.flatMap({ Int(exactly: $0) }), let submitterUid = submitterUid.flatMap({ UInt32(exactly: $0) }),
              let stateName, let submittedAt, pid.map({ Int32(exactly: $0) != nil }) ?? true
        else { return nil }
        let command: JobCommand
        if let argv {
            command = .argv(argv)
        } else if let shell {
            command = .shell(shell)
        } else {
            return nil
        }
        // The result's members are decoded only for a finished job, so only then must they fit.
        guard let state = members.state(named: stateName) else { return nil }
        var job = Job(
            id: JobID(rawValue: id),
            spec: JobSpec(
                command: command, cwd: cwd, environment: [:], queue: queue, priority: priority, name: name, labels: labels ?? [:],
                after: after ?? [], notBefore: notBefore, timeoutUSec: timeoutUSec, maxAttempts: maxAttempts, uniqueKey: uniqueKey),
            state: state, attempt: attempt, submittedAt: submittedAt, startedAt: startedAt, finishedAt: finishedAt,
            submitterUid: submitterUid, pid: pid.map { Int32($0) }, held: held ?? false, suspended: suspended ?? false)
        job.slurmJobId = slurmJobId
        return job
    }
}

/// A finished job's result the reader does not take.
private struct ResultNotTaken: Error {}

/// The members of a job or attempt object that carry its result (`result`, `exitCode`,
/// `signal`, `reason`, `failedDependency`, each `null` or absent when it has none), read as
/// they come, then made into a ``JobResult`` as ``JobResult/init(name:exitCode:signal:reason:failedDependency:)``
/// makes one from what `JSONDecoder` decoded.
struct JobResultMembers {
    var name: String?
    var exitCode: Int64?
    var signal: Int64?
    var reason: String?
    var failedDependency: Int64?

    /// Reads the value of `key` when it is one of the result's members: `true` when taken,
    /// `false` to give up, `nil` when `key` is another member.
    mutating func read(_ key: String, _ reader: inout JSONByteReader) -> Bool? {
        switch key {
        case "result": reader.nullable(&name) { $0.string() }
        case "exitCode": reader.nullable(&exitCode) { $0.integer() }
        case "signal": reader.nullable(&signal) { $0.integer() }
        case "reason": reader.nullable(&reason) { $0.string() }
        case "failedDependency": reader.nullable(&failedDependency) { $0.integer() }
        default: nil
        }
    }

    /// The result, or `nil` without a name, for an unknown one, a missing payload, or an
    /// `exitCode` or `signal` that does not fit an `Int32` (as `JSONDecoder` requires).
    var result: JobResult? {
        guard let name, exitCode.map({ Int32(exactly: $0) != nil }) ?? true, signal.map({ Int32(exactly: $0) != nil }) ?? true else {
            return nil
        }
        return JobResult(
            name: name, exitCode: exitCode.map { Int32($0) }, signal: signal.map { Int32($0) }, reason: reason,
            failedDependency: failedDependency.map(JobID.init(rawValue:)))
    }

    /// The state called `stateName`, its result from these members when it is `finished`; `nil`
    /// for an unknown state, or a finished one without a result the reader takes.
    func state(named stateName: String) -> JobState? {
        try? JobState(name: stateName, finishedResult: { () throws(ResultNotTaken) -> JobResult in
            guard let result else { throw ResultNotTaken() }
            return result
        })
    }
}

extension JobAttempt {
    /// Reads an attempt as ``init(from:)`` decodes it, or gives up (`nil`).
    @Sendable public static func read(_ reader: inout JSONByteReader) -> JobAttempt? {
        var attempt: Int64?, finishedAt: Date?, startedAt: String?, slurmJobId: String?
        var members = JobResultMembers()
        let ok = reader.object { key, reader in
            if let taken = members.read(key, &reader) { return taken }
            switch key {
            case "attempt": return reader.required(&attempt) { $0.integer() }
            case "finishedAt": return reader.required(&finishedAt) { $0.string().flatMap(Timestamp.parse) }
            case "startedAt": return reader.nullable(&startedAt) { $0.string() }
            case "slurmJobId": return reader.nullable(&slurmJobId) { $0.string() }
            default: return reader.skipValue()
            }
        }
        // `result` is required here: a null one reads as no result, and gives up.
        guard ok, let attempt = attempt.flatMap({ Int(exactly: $0) }), let finishedAt, let result = members.result else { return nil }
        // A start time that is not one reads as none, as init(from:) reads it.
        return JobAttempt(
            attempt: attempt, startedAt: startedAt.flatMap(Timestamp.parse), finishedAt: finishedAt, result: result, slurmJobId: slurmJobId)
    }
}
