import Dispatch
import Glibc
import OrchestratorAPI

/// One `Logs` call: sends a job's output from where it starts to the end of the file; with
/// `follow`, on as the job writes it, until the job has finished and the file is drained, or
/// the client has gone.
///
/// Paced by the reader (``ReplyPacer``): the next chunk is read only when the client has room
/// for it, so a log of any size, or a job writing faster than its follower reads, streams in
/// constant daemon memory. File reads and watches run on the stream's own queue, never on the
/// control queue.
///
/// Following is event-driven, never polling: an inotify(7) instance watches the log file
/// (`IN_MODIFY`, `IN_CLOSE_WRITE`) and wakes the stream through an ``EpollLoop`` watch; the scheduler's
/// `wait(for:)` tells when the job has finished. While the job has not started, its log file
/// does not exist, so the logs directory is watched for the file's creation (`IN_CREATE`,
/// `IN_MOVED_TO`) instead; the stream does not create the file itself, so reading a log never
/// changes the state directory. A follower whose client left releases its watch at the next
/// chunk it would send (a silent job's follower notices at the job's next write or its end).
///
/// An actor on its own queue (``DispatchQueueExecutor``): the watch fires there and the
/// pacer's steps hop there, entering the actor with `assumeIsolated`.
actor LogStream {
    private let executor = DispatchQueueExecutor(queue: DispatchQueue(label: "orchd.logs", target: .global(qos: .utility)))
    private nonisolated var queue: DispatchQueue { executor.queue }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let responder: VarlinkResponder
    private let start: LogStart
    private let directory: String
    private var cursor: LogCursor
    private var inotifyFD: Int32 = -1
    private var watch: EpollLoop.Watch?
    /// Set once no more output will come: at once without follow, else when the job finished.
    private var jobFinished = false
    private var isFollowing = false
    private var sentFirstReply = false
    private var isDone = false
    /// Set in `run`, released when the stream ends (it holds this stream through its step).
    private var pacer: ReplyPacer?
    /// What is followed, if anything.
    private var follow: Follow?
    /// The attempt being sent is over and the job was retried: once its file is drained,
    /// the stream goes on with this attempt's file.
    private var nextAttempt: Int?

    /// What a following stream follows: a job's attempt, and whether it goes on with the
    /// job's next attempts when the job is retried.
    struct Follow: Sendable {
        /// The job.
        var job: JobID
        /// The attempt whose output is sent first.
        var attempt: Int
        /// Go on with the next attempt's output when this one ends and the job is retried.
        var nextAttempts: Bool
        /// The log file of an attempt.
        var path: @Sendable (Int) -> String
    }

    /// Creates a stream of the log file at `path`.
    /// - Parameters:
    ///   - path: the log file, in the logs directory.
    ///   - start: where the stream begins.
    ///   - chunkBytes: raw bytes per reply at most.
    ///   - responder: the call's replies.
    ///   - owner: the uid of the job's owner (``LogCursor/open()`` reads only their file).
    ///   - mustExist: the job's process was started, so a missing file is lost output
    ///     (`LogMissing`), not output still to come.
    init(
        path: String, start: LogStart, chunkBytes: Int, responder: VarlinkResponder, owner: UInt32, mustExist: Bool = false,
        attempt: Int? = nil
    ) {
        self.cursor = LogCursor(path: path, chunkBytes: chunkBytes, owner: owner, mustExist: mustExist, attempt: attempt)
        self.start = start
        self.responder = responder
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        self.directory = slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Sends the output so far; with `following`, goes on until the attempt followed is over
    /// and, when it goes on with next attempts, until the job has finished.
    /// - Parameters:
    ///   - follow: what to follow, or `nil` to send what the file holds now and end.
    ///   - scheduler: tells when the followed attempt is over.
    nonisolated func run(following follow: Follow?, scheduler: Scheduler) {
        let pacer = ReplyPacer(
            responder: responder,
            step: { [self] done in queue.async { done(self.assumeIsolated { $0.sendNextChunk() }) } },
            disconnected: { [self] in queue.async { self.assumeIsolated { $0.stop() } } })
        queue.async { [self] in
            assumeIsolated { stream in
                stream.pacer = pacer
                stream.isFollowing = follow != nil
                stream.follow = follow
                guard stream.begin() else { return }
                if let follow {
                    stream.awaitEnd(of: follow.attempt, scheduler: scheduler)
                } else {
                    stream.jobFinished = true
                }
                pacer.start()
            }
        }
    }

    /// Learns when `attempt` is over: then either no more output comes (the job finished, or
    /// only that attempt is followed), or the next attempt's file follows.
    private func awaitEnd(of attempt: Int, scheduler: Scheduler) {
        guard let follow else { return }
        Task {
            // Whether it finished or vanished (pruned), nothing more is written to this file.
            let job = await scheduler.attemptOver(follow.job, attempt: attempt)
            self.queue.async {
                self.assumeIsolated { stream in
                    // A later attempt follows when one will come or already came (a stream
                    // resumed after a reconnect may start behind the job).
                    if let job, follow.nextAttempts, !job.state.isFinished || job.attempt > attempt {
                        stream.nextAttempt = attempt + 1
                        stream.awaitEnd(of: attempt + 1, scheduler: scheduler)
                    } else {
                        stream.jobFinished = true
                    }
                    stream.pacer?.wake()
                }
            }
        }
    }

    /// Goes on with the next attempt's file, from its start (watched for its creation while
    /// it does not exist).
    private func switchToNextAttempt() throws(LogReadError) {
        guard let attempt = nextAttempt, let follow else { return }
        nextAttempt = nil
        cursor.close()
        cursor = LogCursor(path: follow.path(attempt), chunkBytes: cursor.chunkBytes, owner: cursor.owner, attempt: attempt)
        if try !cursor.open() {
            guard inotify_add_watch(inotifyFD, directory, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
                throw LogReadError("cannot watch", path: directory)
            }
            _ = try cursor.open()
        }
        if cursor.isOpen { try watchFile() }
    }

    // MARK: - Steps

    /// Opens the file and, when following, sets the watch up before the first read, so no
    /// write falls between the two.
    private func begin() -> Bool {
        do throws(LogReadError) {
            guard isFollowing else {
                // A job that has not started yet has no file: its output is empty so far.
                if try cursor.open() { try cursor.seek(to: start) }
                return true
            }
            inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard inotifyFD >= 0 else { throw LogReadError("cannot watch", path: cursor.path) }
            // A follow holds its descriptors for as long as the job runs: not those kept for
            // jobs (its connection's own descriptor is checked on accept).
            guard VarlinkServer.descriptorReserve(below: inotifyFD) < .deep else {
                throw LogReadError("cannot watch", path: cursor.path, code: EMFILE)
            }
            if try !cursor.open() {
                guard inotify_add_watch(inotifyFD, directory, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
                    throw LogReadError("cannot watch", path: directory)
                }
                // It may have been created before the directory watch was in place.
                _ = try cursor.open()
            }
            if cursor.isOpen { try watchFile() }
            try cursor.seek(to: start)
            watch = EpollLoop.shared.watch(inotifyFD, for: .readable, on: queue) { [self] _, _ in
                assumeIsolated { $0.changed() }
            }
            return true
        } catch {
            fail(error)
            return false
        }
    }

    /// Sends the next chunk: once the file is drained, the final reply when no more output
    /// will come, else nothing more until the file changes.
    private func sendNextChunk() -> ReplyPacer.Step {
        guard !isDone else { return .finished }
        // Read before the chunk: what the job wrote before it finished is in the file. With an
        // attempt still to switch to, this file's end is not the stream's, even once the job
        // has finished (its later attempts' ends can be known before this file is drained).
        let switchesAttempt = nextAttempt != nil
        let isLastOutput = jobFinished && !switchesAttempt
        do throws(LogReadError) {
            if !cursor.isOpen, try cursor.open(), isFollowing { try watchFile() }
            // A follower's first reply comes at once, even empty: its client can tell the
            // stream is live (and watching).
            let reachedEnd = try cursor.sendChunk(to: responder, endsCall: isLastOutput, evenIfEmpty: !sentFirstReply)
            sentFirstReply = true
            guard reachedEnd else { return .more }
            if switchesAttempt {
                // Read after the attempt was known to be over: its file was complete.
                try switchToNextAttempt()
                return .more
            }
            guard isLastOutput else { return .idle }
            stop()
            return .finished
        } catch {
            fail(error)
            return .finished
        }
    }

    /// The file changed, or something was created in the logs directory.
    private func changed() {
        guard !isDone else { return }
        drainEvents()
        pacer?.wake()
    }

    // MARK: - Watches

    /// Watches the open log file instead of the directory.
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
        stop()
    }

    /// Releases the watch, the file and the pacer.
    private func stop() {
        guard !isDone else { return }
        isDone = true
        let fd = inotifyFD
        if let watch {
            // Closed once the watch is gone: a descriptor number is reused at once.
            watch.cancel { Glibc.close(fd) }
        } else if fd >= 0 {
            Glibc.close(fd)
        }
        watch = nil
        inotifyFD = -1
        cursor.close()
        pacer = nil
    }
}
