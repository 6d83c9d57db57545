import OrchestratorAPI

/// A Slurm job's state (`job_state` of `squeue --json`, `State` of `sacct`; squeue(1) "JOB
/// STATE CODES") and what it means for orchd's attempt.
struct SlurmJobState: Hashable, Sendable {
    /// The state's name, e.g. `RUNNING`, `COMPLETED`, `OUT_OF_MEMORY`. sacct may append a
    /// detail (`CANCELLED by 0`); only the first word counts.
    let name: String

    /// Creates a state from Slurm's text.
    init(_ text: String) {
        name = String(text.split(separator: " ").first ?? "").uppercased()
    }

    /// Whether the job has ended for good. `COMPLETING` has not: processes may still run.
    var isFinal: Bool {
        ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "DEADLINE", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "PREEMPTED"]
            .contains(name)
    }

    /// Whether Slurm ended the job from outside it: a cancel, its time limit, its node lost,
    /// a preemption. Its processes were signalled, so a status over 128 may be their signal's.
    var isEndedFromOutside: Bool {
        ["CANCELLED", "TIMEOUT", "DEADLINE", "NODE_FAIL", "BOOT_FAIL", "PREEMPTED"].contains(name)
    }

    /// The attempt's result for a final state.
    /// - Parameters:
    ///   - exitStatus: what the job's exit-status file says, when it was written.
    ///   - waitStatus: Slurm's exit code of the batch script, a wait(2) status (`exit_code`
    ///     of squeue --json: status << 8 | signal), when known.
    /// - Returns: the result, or `nil` for a state that is not final.
    func result(exitStatus: SlurmBatchScript.Status?, waitStatus: Int32?) -> JobResult? {
        // The batch script writes its exit status as its last act: when it did, the job's
        // command ran to its end, and what Slurm said of the job afterwards (its node lost,
        // the job cancelled by someone as it finished) does not change that result.
        if let exitStatus, isEndedFromOutside {
            return Self.result(of: exitStatus)
        }
        switch name {
        case "COMPLETED", "FAILED":
            if let exitStatus { return Self.result(of: exitStatus) }
            return Self.result(waitStatus: waitStatus) ?? (name == "COMPLETED" ? .succeeded : .failed(exitCode: 1))
        case "CANCELLED": return .cancelled
        case "TIMEOUT", "DEADLINE": return .timedOut
        case "OUT_OF_MEMORY":
            // Slurm killed it for its memory limit: a failure, whose code says so when the
            // script could still report one.
            if case .exited(let code)? = exitStatus, code != 0 { return .failed(exitCode: code) }
            return .failed(exitCode: Self.outOfMemoryExitCode)
        case "NODE_FAIL", "BOOT_FAIL", "PREEMPTED": return .interrupted
        default: return nil
        }
    }

    /// The exit code of a job Slurm ended for using too much memory without the script
    /// reporting one: 128 + SIGKILL, as a shell shows a process the kernel's OOM killer ended.
    static let outOfMemoryExitCode: Int32 = 137

    /// The result an exit-status file reports.
    static func result(of exitStatus: SlurmBatchScript.Status) -> JobResult {
        switch exitStatus {
        case .spawnFailed(let reason): .spawnFailed(reason: reason)
        case .exited(let code): code == 0 ? .succeeded : .failed(exitCode: code)
        }
    }

    /// A batch script's result from its wait status, or `nil` when there is none.
    static func result(waitStatus: Int32?) -> JobResult? {
        guard let waitStatus else { return nil }
        let signal = waitStatus & 0x7f
        if signal != 0 { return .signaled(signal: signal) }
        let code = (waitStatus >> 8) & 0xff
        return code == 0 ? .succeeded : .failed(exitCode: code)
    }
}
