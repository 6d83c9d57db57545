import Foundation
import OrchestratorAPI

// MARK: - Decoding job rows

extension JobStore {
    /// Builds a job from a row of ``columns``, read by column name, checking every value
    /// instead of trusting it.
    /// - Parameters:
    ///   - row: the statement's current row.
    ///   - environment: whether to read the job's environment (only a launch needs it);
    ///     without, ``JobSpec/environment`` is empty.
    /// - Throws: ``JobStoreError/invalidRow(id:column:detail:)`` naming the first bad column.
    func decodeJob(_ row: Row, environment: Bool = true) throws(JobStoreError) -> RunningJobRecord {
        let id = row.int64("id") ?? 0
        func bad(_ column: String, _ detail: String) -> JobStoreError {
            .invalidRow(id: id, column: column, detail: detail)
        }
        func integer(_ column: String) throws(JobStoreError) -> Int64? {
            switch row.storageClass(column) {
            case .null: return nil
            case .integer: return row.int64(column)
            default: throw bad(column, "not an integer")
            }
        }
        func required<T>(_ value: T?, _ column: String) throws(JobStoreError) -> T {
            guard let value else { throw bad(column, "NULL") }
            return value
        }
        func int32(_ column: String) throws(JobStoreError) -> Int32? {
            guard let value = try integer(column) else { return nil }
            guard let narrow = Int32(exactly: value) else { throw bad(column, "\(value) is out of range") }
            return narrow
        }
        func time(_ column: String) throws(JobStoreError) -> Date? {
            guard let value = try integer(column) else { return nil }
            guard Timestamp.isWritable(microseconds: value) else { throw bad(column, "\(value) µs is not a time in years 0000-9999") }
            return Timestamp.date(microseconds: value)
        }
        func text(_ column: String) throws(JobStoreError) -> String? {
            switch row.storageClass(column) {
            case .null: return nil
            case .text: return row.string(column)
            default: throw bad(column, "not text")
            }
        }
        func decoded<T: Decodable>(_ type: T.Type, _ column: String) throws(JobStoreError) -> T {
            try decodeJSON(type, required(text(column), column)) { bad(column, $0) }
        }

        func dependencies() throws(JobStoreError) -> [JobID] {
            // Most jobs depend on none: skip the decoder for them.
            if try text("dependencies") == "[]" { return [] }
            return try decoded([Int64].self, "dependencies").map(JobID.init(rawValue:))
        }

        guard row.storageClass("id") == .integer, id > 0 else { throw bad("id", "not a positive integer") }
        let queueText = try required(text("queue"), "queue")
        guard let queue = QueueName(rawValue: queueText) else { throw bad("queue", "'\(queueText)' is not a queue name") }
        let command: JobCommand
        switch (row.isNull("argv"), row.isNull("shell")) {
        case (false, true):
            let json = try required(text("argv"), "argv")
            if let words = JobColumnJSON.decode(json) {
                command = .argv(words)
            } else {
                command = .argv(try decodeJSON([String].self, json) { bad("argv", $0) })
            }
        case (true, false): command = .shell(try required(text("shell"), "shell"))
        default: throw bad("argv", "exactly one of argv and shell must be set")
        }
        let labelsText = try required(text("labels"), "labels")
        var spec = JobSpec(
            command: command, cwd: try required(text("cwd"), "cwd"), environment: [:], queue: queue,
            priority: Int(try required(integer("priority"), "priority")), name: try text("name"),
            // Most jobs have no labels: skip the decoder for them.
            labels: labelsText == "{}" ? [:] : try decoded([String: String].self, "labels"),
            after: try dependencies(),
            notBefore: try time("not_before"),
            timeoutUSec: try integer("timeout_usec"),
            maxAttempts: Int(try required(integer("max_attempts"), "max_attempts")),
            uniqueKey: try text("unique_key"))
        if environment {
            // Assigned directly: the initializer would filter it, and what was stored is what ran.
            spec.environment = try self.environment(try required(integer("environment_id"), "environment_id")) {
                bad("environment", $0)
            }
        }

        let stateName = try required(text("state"), "state")
        let state = try JobState(name: stateName) { () throws(JobStoreError) -> JobResult in
            let resultName = try required(text("result"), "result")
            guard let result = JobResult(
                name: resultName, exitCode: try int32("exit_code"), signal: try int32("signal"),
                reason: try text("reason"),
                failedDependency: try integer("failed_dependency").map(JobID.init(rawValue:)))
            else { throw bad("result", "'\(resultName)' with its payload is not a job result") }
            return result
        }
        guard let state else { throw bad("state", "'\(stateName)' is not a job state") }

        let uid = try required(integer("submitter_uid"), "submitter_uid")
        guard let submitterUid = UInt32(exactly: uid) else { throw bad("submitter_uid", "\(uid) is out of range") }
        var job = Job(
            id: JobID(rawValue: id), spec: spec, state: state,
            attempt: Int(try required(integer("attempt"), "attempt")),
            submittedAt: try required(time("submitted_at"), "submitted_at"),
            startedAt: try time("started_at"),
            finishedAt: try time("finished_at"),
            submitterUid: submitterUid, pid: try int32("pid"),
            held: try required(integer("held"), "held") != 0, suspended: try required(integer("suspended"), "suspended") != 0)
        job.slurmJobId = try text("slurm_job_id").flatMap { $0.isEmpty ? nil : $0 }
        return RunningJobRecord(
            job: job, processStartTicks: try integer("process_start_ticks").map(UInt64.init(bitPattern:)),
            bootID: try text("boot_id"), slurmJobID: try text("slurm_job_id"))
    }

    /// Decodes stored JSON of the expected shape.
    /// - Throws: what `bad` makes of the reason, when it is not JSON of that shape.
    func decodeJSON<T: Decodable>(
        _ type: T.Type, _ json: String, _ bad: (String) -> JobStoreError
    ) throws(JobStoreError) -> T {
        do {
            return try decoder.decode(type, from: Data(json.utf8))
        } catch {
            throw bad("not valid JSON of the expected shape")
        }
    }
}
