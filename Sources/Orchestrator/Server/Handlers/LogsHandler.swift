import OrchestratorAPI

/// `io.orchd.Jobs.Logs`: streams a job's captured output in base64 chunks, from an offset or
/// from where its last lines begin, to the current end of the file; with `follow`, on as the
/// job writes more until it has finished. Each chunk is read only when the client has room
/// for it (``LogStream``); reading and watching happen on queues of their own, never on the
/// control queue.
struct LogsHandler: VarlinkMethodHandler {
    static let method = "io.orchd.Jobs.Logs"
    static let requiresMore = true
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
        let path = scheduler.logPath(of: parameters.id, stream: parameters.stream)
        let scheduler = self.scheduler
        scheduler.job(parameters.id) { result in
            if case .failure(let error) = result {
                responder.fail(error.varlinkError)
                return
            }
            LogStream(path: path, start: start, chunkBytes: Self.chunkBytes, responder: responder)
                .run(following: parameters.follow == true ? parameters.id : nil, scheduler: scheduler)
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
}
