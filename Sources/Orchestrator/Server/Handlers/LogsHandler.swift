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
            let path = Self.logPath(of: found.job, stream: parameters.stream, scheduler: scheduler)
            let otherPath = Self.logPath(of: found.job, stream: parameters.stream == .stdout ? .stderr : .stdout, scheduler: scheduler)
            if parameters.follow == true, let slash = path.lastIndex(of: "/") {
                // Following a job not started yet watches its owner's directory for the file;
                // the directory is made now if this is the owner's first job, as a launch would.
                let owner = scheduler.runsJobsAsSubmitter && found.job.submitterUid != 0
                    ? UserAccount.lookup(uid: found.job.submitterUid) : nil
                try? LogDirectory.prepare(String(path[..<slash]), owner: owner)
            }
            let mustExist = Self.logMustExist(found.job, attempts: found.attempts, otherLogPath: otherPath)
            LogStream(path: path, start: start, chunkBytes: Self.chunkBytes, responder: responder, mustExist: mustExist)
                .run(following: parameters.follow == true ? parameters.id : nil, scheduler: scheduler)
        }
    }

    /// A job's log file: in its owner's directory, or where logs were before there was one
    /// per owner when only that file exists (a job that ran before the change).
    static func logPath(of job: Job, stream: JobsInterface.LogStream, scheduler: Scheduler) -> String {
        let path = scheduler.logPath(of: job.id, owner: job.submitterUid, stream: stream)
        let legacy = scheduler.legacyLogPath(of: job.id, stream: stream)
        return access(path, F_OK) != 0 && access(legacy, F_OK) == 0 ? legacy : path
    }

    /// Where the stream begins.
    /// - Throws: `InvalidParameter` for a negative offset or line count, or both given.
    static func start(of parameters: JobsInterface.LogsParameters) throws(VarlinkError) -> LogStart {
        if let offset = parameters.offset, offset < 0 { throw .invalidParameter("offset") }
        guard let lines = parameters.tailLines else { return .offset(parameters.offset ?? 0) }
        guard lines >= 0, parameters.offset == nil else { throw .invalidParameter("tailLines") }
        return .lastLines(lines)
    }

    /// Whether a job's log file must exist: whether a process of it was spawned, since the
    /// launcher creates both log files just before the spawn. A job never started (queued,
    /// waiting, `dependency_failed`, `spawn_failed`, or running but not yet spawned) has no
    /// file, and its output is empty so far; a started job without its file lost its output.
    /// - Parameters:
    ///   - job: the job as stored now.
    ///   - attempts: its ended attempts, oldest first.
    ///   - otherLogPath: the job's other log file (stderr for stdout), the evidence when the
    ///     record cannot tell (cancelled or interrupted around the spawn).
    static func logMustExist(_ job: Job, attempts: [JobAttempt], otherLogPath: String) -> Bool {
        let lastResult: JobResult?
        switch job.state {
        case .running: return job.pid != nil
        case .finished(let result): lastResult = result
        case .waiting, .queued:
            guard job.attempt > 0 else { return false }
            lastResult = attempts.last?.result
        }
        switch lastResult {
        case .succeeded, .failed, .signaled, .timedOut: return true
        case .spawnFailed, .dependencyFailed: return false
        case .cancelled, .interrupted, nil: return access(otherLogPath, F_OK) == 0
        }
    }
}
