import Dispatch
import Glibc
import OrchestratorAPI

/// One `Logs` call with `follow`: sends a job's output as the job writes it, until the job has
/// finished and the file is drained, or the client has gone.
///
/// Event-driven, never polling: an inotify(7) instance watches the log file (`IN_MODIFY`,
/// `IN_CLOSE_WRITE`) and wakes a dispatch read source; the scheduler's `wait(for:)` tells
/// when the job has finished. While the job has not started, its log file does not exist, so
/// the logs directory is watched for the file's creation (`IN_CREATE`, `IN_MOVED_TO`) instead;
/// the follower does not create the file itself, so reading a log never changes the state
/// directory. Each event first checks that the client is still connected, and a follower
/// whose client left releases its watch then (a silent job's follower notices at the job's
/// next write or its end).
final class LogFollower: @unchecked Sendable {  // mutable state confined to `queue`
    private let queue = DispatchQueue(label: "orchd.logs.follow", target: .global(qos: .utility))
    private let responder: VarlinkResponder
    private let start: LogStart
    private let directory: String
    private var cursor: LogCursor
    private var inotifyFD: Int32 = -1
    private var source: (any DispatchSourceRead)?
    private var isDone = false

    /// Creates a follower of the log file at `path`.
    /// - Parameters:
    ///   - path: the log file, in the logs directory.
    ///   - start: where the stream begins.
    ///   - chunkBytes: raw bytes per reply at most.
    ///   - responder: the call's replies.
    ///   - mustExist: the job's process was started, so a missing file is lost output.
    init(path: String, start: LogStart, chunkBytes: Int, responder: VarlinkResponder, mustExist: Bool = false) {
        self.cursor = LogCursor(path: path, chunkBytes: chunkBytes, mustExist: mustExist)
        self.start = start
        self.responder = responder
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        self.directory = slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Sends the output so far, then follows it until job `id` has finished.
    func run(until id: JobID, finishes scheduler: Scheduler) {
        queue.async { [self] in
            guard begin() else { return }
            scheduler.wait(for: [id]) { _ in
                // Whether it finished or vanished (pruned), nothing more will be written.
                self.queue.async { self.jobFinished() }
            }
        }
    }

    // MARK: - Events

    /// Sets the watch up before the first read, so no write falls between the two.
    private func begin() -> Bool {
        do throws(LogReadError) {
            inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard inotifyFD >= 0 else { throw LogReadError("cannot watch", path: cursor.path) }
            if try !cursor.open() {
                guard inotify_add_watch(inotifyFD, directory, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
                    throw LogReadError("cannot watch", path: directory)
                }
                // It may have been created before the directory watch was in place.
                _ = try cursor.open()
            }
            if cursor.isOpen { try watchFile() }
            try cursor.seek(to: start)
            let source = DispatchSource.makeReadSource(fileDescriptor: inotifyFD, queue: queue)
            let fd = inotifyFD
            source.setEventHandler { [self] in changed() }
            // libdispatch requires the fd to stay open until the cancel handler runs.
            source.setCancelHandler { Glibc.close(fd) }
            self.source = source
            source.resume()
            // At least one reply now: a client can tell the stream is live (and watching).
            try cursor.send(to: responder, isFinal: false, repliesWhenEmpty: true)
            return true
        } catch {
            fail(error)
            return false
        }
    }

    /// The file changed, or something was created in the logs directory.
    private func changed() {
        guard !isDone else { return }
        drainEvents()
        guard responder.isConnected() else {
            stop(sendingFinalReply: true)
            return
        }
        do throws(LogReadError) {
            if !cursor.isOpen, try cursor.open() { try watchFile() }
            try cursor.send(to: responder, isFinal: false)
        } catch {
            fail(error)
        }
    }

    /// The job has finished: what is in the file now is all there will be.
    private func jobFinished() {
        guard !isDone else { return }
        do throws(LogReadError) {
            _ = try cursor.open()
            try cursor.send(to: responder, isFinal: true)
            stop(sendingFinalReply: false)
        } catch {
            fail(error)
        }
    }

    // MARK: - Watches

    /// Watches the open log file instead of the directory. The watch is on the inode, so a new
    /// attempt's O_TRUNC keeps it.
    private func watchFile() throws(LogReadError) {
        guard inotify_add_watch(inotifyFD, cursor.path, UInt32(IN_MODIFY | IN_CLOSE_WRITE)) >= 0 else {
            throw LogReadError("cannot watch", path: cursor.path)
        }
    }

    /// Reads the pending inotify events. Their content does not matter: any of them means
    /// "look at the file again".
    private func drainEvents() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotifyFD, $0.baseAddress, $0.count) }
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            return  // EAGAIN: drained
        }
    }

    // MARK: - Ending

    private func fail(_ error: LogReadError) {
        guard !isDone else { return }
        responder.fail(error.varlinkError)
        stop(sendingFinalReply: false)
    }

    /// Releases the watch and the file.
    /// - Parameter sendingFinalReply: end the call (for a client that left: every call gets
    ///   its final reply, which the closed connection then drops).
    private func stop(sendingFinalReply: Bool) {
        guard !isDone else { return }
        isDone = true
        if sendingFinalReply {
            responder.reply(JobsInterface.LogsReply(data: "", offset: cursor.offset))
        }
        if let source {
            source.cancel()
        } else if inotifyFD >= 0 {
            Glibc.close(inotifyFD)
        }
        source = nil
        inotifyFD = -1
        cursor.close()
    }
}
