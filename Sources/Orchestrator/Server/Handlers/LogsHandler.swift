import Dispatch
import Glibc
import OrchestratorAPI

/// `io.orchd.Jobs.Logs`: streams a job's captured output in base64 chunks, from an offset or
/// from where its last lines begin, to the current end of the file; with `follow`, on as the
/// job writes more until it has finished. Each chunk is read only when the client has room
/// for it (``LogStream``); reading and watching happen on queues of their own, never on the
/// control queue.
struct LogsHandler: VarlinkMethodHandler {
    static let method = JobsInterface.logs
    /// Waits, or follows, for as long as the client likes.
    static let mayWaitIndefinitely = true
    /// Raw bytes per reply: 192 KiB, 256 KiB once base64-encoded, well under the 1 MiB cap.
    static let chunkBytes = 192 * 1024
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        let parameters: JobsInterface.LogsParameters
        let start: LogStart
        do throws(VarlinkError) {
            parameters = try call.parameters(JobsInterface.LogsParameters.self)
            start = try Self.start(of: parameters)
        } catch {
            responder.fail(error)
            return
        }
        let scheduler = self.scheduler
        let caller = call.caller
        Task {
            let found: (job: Job, attempts: [JobAttempt])
            do throws(SchedulerError) {
                found = try await scheduler.job(parameters.id, by: caller)
            } catch {
                responder.fail(error.varlinkError)
                return
            }
            let job = found.job
            // A job not started yet: its first attempt, whose output is still to come.
            let asked = parameters.attempt ?? parameters.fromAttempt
            let attempt = asked ?? max(job.attempt, 1)
            if let asked, asked < 1 || asked > job.attempt {
                // Following the next attempt of a job that has not made it yet is fine.
                let next = job.state.isFinished || job.state == .running ? job.attempt : job.attempt + 1
                guard parameters.follow == true, asked == next else {
                    responder.fail(JobsInterface.noSuchAttempt(job.id, attempt: asked, attempts: job.attempt))
                    return
                }
            }
            let path = scheduler.logFile(of: job, attempt: attempt, stream: parameters.stream)
            let otherPath = scheduler.logFile(of: job, attempt: attempt, stream: parameters.stream == .stdout ? .stderr : .stdout)
            if parameters.follow == true, let slash = path.lastIndex(of: "/") {
                // Following a job not started yet watches its owner's directory for the file;
                // the directory is made now if this is the owner's first job, as a launch would.
                let owner = scheduler.runsJobsAsSubmitter && job.submitterUid != 0
                    ? UserAccount.lookup(uid: job.submitterUid) : nil
                try? LogDirectory.prepare(String(path[..<slash]), owner: owner)
            }
            let mustExist = Self.logMustExist(job, attempt: attempt, attempts: found.attempts, otherLogPath: otherPath)
            let follow: LogStream.Follow? = parameters.follow == true
                ? LogStream.Follow(job: job.id, attempt: attempt, nextAttempts: parameters.attempt == nil) { next in
                    scheduler.logPath(of: job.id, owner: job.submitterUid, attempt: next, stream: parameters.stream)
                }
                : nil
            LogStream(
                path: path, start: start, chunkBytes: Self.chunkBytes, responder: responder, owner: job.submitterUid,
                mustExist: mustExist, attempt: attempt)
                .run(following: follow, scheduler: scheduler)
        }
    }

    /// Where the stream begins.
    /// - Throws: `InvalidParameter` for a negative offset or line count, or both given.
    static func start(of parameters: JobsInterface.LogsParameters) throws(VarlinkError) -> LogStart {
        if let offset = parameters.offset, offset < 0 { throw .invalidParameter("offset") }
        guard let lines = parameters.tailLines else { return .offset(parameters.offset ?? 0) }
        guard lines >= 0, parameters.offset == nil else { throw .invalidParameter("tailLines") }
        return .lastLines(lines)
    }

    /// Whether an attempt's log file must exist: whether its process was spawned, since the
    /// launcher creates both log files just before the spawn. A job never started (queued,
    /// waiting, `dependency_failed`, `spawn_failed`, or running but not yet spawned) has no
    /// file, and its output is empty so far; a started attempt without its file lost its
    /// output.
    /// - Parameters:
    ///   - job: the job as stored now.
    ///   - attempt: the attempt asked about.
    ///   - attempts: its ended attempts, oldest first.
    ///   - otherLogPath: the attempt's other log file (stderr for stdout), the evidence when
    ///     the record cannot tell (cancelled or interrupted around the spawn).
    static func logMustExist(_ job: Job, attempt: Int, attempts: [JobAttempt], otherLogPath: String) -> Bool {
        let lastResult: JobResult?
        if attempt < job.attempt {
            lastResult = attempts.first { $0.attempt == attempt }?.result
        } else if attempt > job.attempt {
            return false
        } else {
            switch job.state {
            case .running: return job.pid != nil
            case .finished(let result): lastResult = result
            case .waiting, .queued:
                guard job.attempt > 0 else { return false }
                lastResult = attempts.last?.result
            }
        }
        switch lastResult {
        case .succeeded, .failed, .signaled, .timedOut: return true
        case .spawnFailed, .dependencyFailed: return false
        case .cancelled, .interrupted, nil: return access(otherLogPath, F_OK) == 0
        }
    }
}
