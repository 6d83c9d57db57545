import FoundationEssentials
import OrchestratorAPI

/// Short texts describing a job, shared by the table, `show` and command messages.
enum JobText {
    /// The state, or the result when finished: `queued`, `running`, `succeeded`, `failed(3)`,
    /// `signaled(9)`, `cancelled`, `timed_out`, `spawn_failed`, `dependency_failed(4)`.
    static func state(_ state: JobState) -> String {
        guard let result = state.result else { return state.name }
        return self.result(result)
    }

    /// The STATE column of a job: as ``state(_:)``, except that a job waiting to retry shows
    /// `retrying(2/3)`: the attempt it waits for, of those allowed; a held job `held` (with
    /// its state: `queued,held`), a suspended one `running,suspended`.
    static func state(of job: Job) -> String {
        let base: String
        if job.state == .waiting && job.attempt > 0 {
            base = "retrying(\(job.attempt + 1)/\(job.maxAttempts))"
        } else {
            base = state(job.state)
        }
        if job.held { return base + ",held" }
        if job.suspended { return base + ",suspended" }
        return base
    }

    /// A result with its payload in parentheses when it has a number.
    static func result(_ result: JobResult) -> String {
        switch result {
        case .failed(let code): "failed(\(code))"
        case .signaled(let signal): "signaled(\(signal))"
        case .dependencyFailed(let id): "dependency_failed(\(id))"
        default: result.name
        }
    }

    /// How long the job ran (finished) or has been running (running); `nil` before it started.
    static func duration(_ job: Job, now: Date) -> Duration? {
        guard let started = job.startedAt else { return nil }
        let end = job.finishedAt ?? (job.state == .running ? now : nil)
        guard let end else { return nil }
        let microseconds = Int64(((end.timeIntervalSince1970 - started.timeIntervalSince1970) * 1_000_000).rounded())
        return Duration(microseconds: max(0, microseconds))
    }

    /// The command on one line: control characters made visible so a table row stays a row.
    static func command(_ job: Job) -> String {
        job.spec.command.displayText.visible
    }

}
