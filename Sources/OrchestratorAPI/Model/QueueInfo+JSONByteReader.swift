/// Queues are read from replies without `JSONDecoder` when the reply is plain, for the same
/// reason as jobs (``Job/read(_:)``): `orchctl queues`, `status --queue`, `pause` and `resume`
/// read nothing else. The reader accepts only what ``QueueInfo/init(from:)`` decodes to the
/// same value and gives up (`nil`) on anything else, which then goes to `JSONDecoder`.
extension QueueInfo {
    /// Reads a queue as ``init(from:)`` decodes it, or gives up (`nil`).
    @Sendable public static func read(_ reader: inout JSONByteReader) -> QueueInfo? {
        var name: String?, concurrency: Int64?, paused: Bool?, retryBaseUSec: Int64?, retryCapUSec: Int64?
        var jobs: JobCounts?, hooks: [String: String]?, executor: String?, slurm: SlurmSettings?
        var maxRunningPerUser: Int64?, runningPerUser: [String: Int]?
        let ok = reader.object { key, reader in
            switch key {
            case "name": return reader.required(&name) { $0.string() }
            case "concurrency": return reader.required(&concurrency) { $0.integer() }
            case "paused": return reader.required(&paused) { $0.bool() }
            case "retryBaseUSec": return reader.required(&retryBaseUSec) { $0.integer() }
            case "retryCapUSec": return reader.required(&retryCapUSec) { $0.integer() }
            case "jobs": return reader.required(&jobs, JobCounts.read)
            case "hooks": return reader.nullable(&hooks) { $0.stringMap() }
            case "executor": return reader.nullable(&executor) { $0.string() }
            case "slurm": return reader.nullable(&slurm, SlurmSettings.read)
            case "maxRunningPerUser": return reader.nullable(&maxRunningPerUser) { $0.integer() }
            case "runningPerUser": return reader.nullable(&runningPerUser) { $0.integerMap() }
            default: return reader.skipValue()
            }
        }
        guard ok, let name = name.flatMap(QueueName.init(rawValue:)), let concurrency, let paused, let retryBaseUSec, let retryCapUSec,
              let jobs
        else { return nil }
        return QueueInfo(
            name: name, concurrency: Int(concurrency), paused: paused, retryBaseUSec: retryBaseUSec, retryCapUSec: retryCapUSec,
            jobs: jobs, hooks: hooks ?? [:], maxRunningPerUser: maxRunningPerUser.map { Int($0) }, runningPerUser: runningPerUser,
            executor: executor, slurm: slurm)
    }
}

extension QueueInfo.SlurmSettings {
    /// Reads a queue's Slurm settings as the synthesized `init(from:)` decodes them, or gives
    /// up (`nil`).
    @Sendable public static func read(_ reader: inout JSONByteReader) -> QueueInfo.SlurmSettings? {
        var partition: String?, options: [String]?, answered: Bool?, lastError: String?
        let ok = reader.object { key, reader in
            switch key {
            case "partition": return reader.nullable(&partition) { $0.string() }
            case "options": return reader.required(&options) { $0.list { $0.string() } }
            case "answered": return reader.nullable(&answered) { $0.bool() }
            case "lastError": return reader.nullable(&lastError) { $0.string() }
            default: return reader.skipValue()
            }
        }
        guard ok, let options else { return nil }
        return QueueInfo.SlurmSettings(partition: partition, options: options, answered: answered, lastError: lastError)
    }
}

extension JSONByteReader {
    /// An object of integers that fit an `Int`, no key twice, as `[String: Int]` decodes it;
    /// `nil` (give up) otherwise.
    mutating func integerMap() -> [String: Int]? {
        var map: [String: Int] = [:]
        let ok = object { key, reader in
            guard let value = reader.integer() else { return false }
            map[key] = Int(value)
            return true
        }
        return ok ? map : nil
    }
}
