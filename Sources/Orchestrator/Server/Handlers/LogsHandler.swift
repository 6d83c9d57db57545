import Foundation
import Glibc
import OrchestratorAPI

/// `io.orchd.Jobs.Logs`: streams a job's captured output from an offset to the current end
/// of the file, in base64 chunks. Reading happens on the caller's connection queue, never on
/// the control queue.
struct LogsHandler: VarlinkMethodHandler {
    static let method = "io.orchd.Jobs.Logs"
    static let requiresMore = true
    /// Raw bytes per reply: 192 KiB, 256 KiB once base64-encoded, well under the 1 MiB cap.
    static let chunkBytes = 192 * 1024
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        let parameters: JobsInterface.LogsParameters
        do throws(VarlinkError) {
            parameters = try call.parameters(JobsInterface.LogsParameters.self)
            guard (parameters.offset ?? 0) >= 0 else { throw VarlinkError.invalidParameter("offset") }
        } catch {
            responder.fail(error)
            return
        }
        let path = scheduler.logPath(of: parameters.id, stream: parameters.stream)
        scheduler.job(parameters.id) { result in
            if case .failure(let error) = result {
                responder.fail(error.varlinkError)
                return
            }
            Self.stream(path: path, from: parameters.offset ?? 0, to: responder)
        }
    }

    private static func stream(path: String, from start: Int64, to responder: VarlinkResponder) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            // A job that has not started yet has no log file: its output is empty so far.
            responder.reply(JobsInterface.LogsReply(data: "", offset: start))
            return
        }
        defer { close(fd) }
        var offset = start
        var buffer = [UInt8](repeating: 0, count: chunkBytes)
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if count < 0 {
                if errno == EINTR { continue }
                responder.fail(JobsInterface.storageFailure("cannot read \(path): \(String(cString: strerror(errno)))"))
                return
            }
            offset += Int64(count)
            let isLast = count < chunkBytes
            responder.reply(
                JobsInterface.LogsReply(data: Data(buffer[..<count]).base64EncodedString(), offset: offset),
                continues: !isLast)
            if isLast { return }
        }
    }
}
