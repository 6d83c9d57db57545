import CommandLineParsing
#if canImport(Glibc)
import Glibc
#endif
import OrchestratorAPI
import Synchronization

/// One connection to orchd, turning client errors into ``CommandFailure``s with the right exit
/// code. It remembers whether the daemon has answered yet, because a connection lost before the
/// first reply means "daemon unreachable" (69) and one lost after it does not.
///
/// A call orchd refuses with `TooManyConnections` (it is short of file descriptors, or the
/// caller has too many connections open) did nothing: orchd answers it so before reading any
/// call, or for a log it could not open. Such a call is made again on a new connection, after
/// 50 ms doubling to 1 s, until ``refusalRetryLimit`` after the command's first refusal (one
/// budget for all its calls); only then is the refusal the command's error (exit 69). A burst
/// of launches near orchd's descriptor limit thus delays a command instead of failing it.
/// Refused for over a second, the command says so once on standard error.
///
/// A call refused with `DatabaseLocked` (neither `endsKept` nor `partial`) whose change is one
/// transaction (``oneTransactionMethods``) changed nothing either: another process holds the
/// job database's lock, and orchd waits for it only 0.1 s, so that no job's end waits behind
/// a request. The call is made again on the same connection, the same way,
/// until ``lockRetryLimit`` after the command's first such refusal; only then is it the
/// command's error (exit 1).
final class OrchdConnection {
    /// How long after its first refusal a command makes refused calls again.
    static let refusalRetryLimit = Duration.seconds(10)
    /// How long after its first `DatabaseLocked` a command makes such calls again: as long as
    /// orchd itself used to wait for the lock.
    static let lockRetryLimit = Duration.seconds(5)
    /// When this process was first refused, and whether it said so; one budget for every call
    /// of the command, so that one making several (or reconnecting) does not wait several times.
    private static let refusals = Mutex<(first: ContinuousClock.Instant?, said: Bool)>((nil, false))
    /// The same for `DatabaseLocked`.
    private static let lockRefusals = Mutex<(first: ContinuousClock.Instant?, said: Bool)>((nil, false))
    /// The calls made again after `DatabaseLocked`: those whose change is one transaction, so
    /// that a refusal means that nothing changed. A cancel is not (it stops running jobs
    /// before it writes, and cancels many in turns), nor are `retry --failed` and `prune`.
    static let oneTransactionMethods: Set<String> = [
        JobsInterface.submit.name, JobsInterface.submitBatch.name, JobsInterface.retry.name, JobsInterface.hold.name,
        JobsInterface.release.name, JobsInterface.edit.name, JobsInterface.suspend.name, JobsInterface.resume.name,
        QueuesInterface.add.name, QueuesInterface.set.name, QueuesInterface.remove.name, QueuesInterface.pause.name,
        QueuesInterface.resume.name,
    ]

    /// Whether a refused call is being made again now: notes about a call in progress (a
    /// cancel's teardown) would be untrue while orchd has not taken it.
    static var isRetryingRefusedCall: Bool { retrying.load(ordering: .relaxed) }
    private static let retrying = Atomic<Bool>(false)

    private var client: VarlinkClient
    private let socket: String
    private let uid: UInt32
    /// Whether any reply has arrived on this connection.
    private(set) var hasReplied = false

    /// Connects to `socket`.
    /// - Throws: ``CommandFailure`` (69 when nothing listens, 77 when access is denied).
    init(socket: String, uid: UInt32) throws(CommandFailure) {
        self.socket = socket
        self.uid = uid
        do {
            client = try VarlinkClient(socketPath: socket)
        } catch {
            throw CommandFailure(error, socket: socket, afterReply: false, uid: uid)
        }
    }

    /// Calls `method` and returns its reply; see ``VarlinkClient/call(_:_:)``.
    /// - Throws: ``CommandFailure``.
    func call<P, R>(_ method: VarlinkMethod<P, R>, _ parameters: P) throws(CommandFailure) -> R {
        var refusals = RefusalRetry()
        while true {
            do {
                let reply = try client.call(method, parameters)
                hasReplied = true
                Self.retrying.store(false, ordering: .relaxed)
                return reply
            } catch {
                if case .remote(let remote) = error, try refusals.reconnectAfter(remote, of: method.name, self) { continue }
                if case .remote = error { hasReplied = true }
                throw CommandFailure(error, socket: socket, afterReply: hasReplied, uid: uid)
            }
        }
    }

    /// The retries of one call refused with `TooManyConnections`, or with `DatabaseLocked`
    /// when nothing was changed.
    private struct RefusalRetry {
        private var delay = Duration.milliseconds(50)

        /// Whether the call refused with `error` is to be made again: if so, after the
        /// back-off, and for `TooManyConnections` once `connection` has been connected anew.
        /// - Throws: ``CommandFailure`` when the new connection cannot be made.
        mutating func reconnectAfter(_ error: VarlinkError, of method: String, _ connection: OrchdConnection) throws(CommandFailure) -> Bool {
            let isLock: Bool
            let limit: Duration
            let what: String
            switch error.name {
            case ManagerInterface.Errors.tooManyConnections:
                (isLock, limit) = (false, OrchdConnection.refusalRetryLimit)
                what = "refused by orchd: " + (error.parameters["message"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? error.name)
            case JobsInterface.Errors.databaseLocked
                where error.parameters["endsKept"] == nil && error.parameters["partial"] == nil
                    && OrchdConnection.oneTransactionMethods.contains(method):
                (isLock, limit) = (true, OrchdConnection.lockRetryLimit)
                let path = error.parameters["path"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "the job database"
                what = "\(path) is locked by another process"
            default:
                OrchdConnection.retrying.store(false, ordering: .relaxed)
                return false
            }
            let now = ContinuousClock.now
            let (first, say) = isLock ? Self.note(now, in: OrchdConnection.lockRefusals) : Self.note(now, in: OrchdConnection.refusals)
            guard now < first + limit else {
                OrchdConnection.retrying.store(false, ordering: .relaxed)
                return false
            }
            if say {
                Console.standard.printError("orchctl: \(what); trying again for up to \(TimeSpan.format(limit))...")
            }
            OrchdConnection.retrying.store(true, ordering: .relaxed)
            // A timed back-off, not a wait on an event: nothing tells a client that orchd has
            // descriptors again (its socket exists throughout), or that another process let go
            // of the database, and a blocking CLI has no other work meanwhile. Bounded by the
            // budget above.
            // The last wait ends with the budget, so the last try comes at its end.
            let (seconds, attoseconds) = min(delay, first + limit - now).components
            usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            delay = min(delay * 2, .seconds(1))
            // A refused connection is closed by orchd; a locked database's refusal leaves it open.
            if !isLock { try connection.reconnect() }
            return true
        }

        /// Notes a refusal at `now` in `budget`: returns when the first came, and whether the
        /// command is to say now that it is trying again (once, a second after the first).
        private static func note(
            _ now: ContinuousClock.Instant, in budget: borrowing Mutex<(first: ContinuousClock.Instant?, said: Bool)>
        ) -> (first: ContinuousClock.Instant, say: Bool) {
            budget.withLock { refusals in
                let first = refusals.first ?? now
                refusals.first = first
                let say = !refusals.said && now - first >= .seconds(1)
                if say { refusals.said = true }
                return (first, say)
            }
        }
    }

    /// Replaces the client with a new connection to the same socket.
    private func reconnect() throws(CommandFailure) {
        do {
            client = try VarlinkClient(socketPath: socket)
        } catch {
            throw CommandFailure(error, socket: socket, afterReply: false, uid: uid)
        }
    }

    /// The login names of `uids`, as orchd's password database has them
    /// (`io.orchd.Manager.GetUserNames`, asked for at most 1000 at a time). orchctl never reads
    /// that database itself: it is a static executable, and a static glibc that loads an NSS
    /// module (for a uid /etc/passwd lacks) crashes.
    /// - Returns: names by uid; a uid orchd does not know is absent, and so is every uid when
    ///   orchd will not say (older than the method, or the caller is no admin): the names only
    ///   dress a listing, which then shows uids.
    /// - Throws: ``CommandFailure`` on any other error.
    func userNames(_ uids: Set<UInt32>) throws(CommandFailure) -> [UInt32: String] {
        var names: [UInt32: String] = [:]
        let sorted = uids.sorted()
        let chunk = ManagerInterface.UserNamesParameters.maximumCount
        for start in stride(from: 0, to: sorted.count, by: chunk) {
            let parameters = ManagerInterface.UserNamesParameters(uids: Array(sorted[start..<min(start + chunk, sorted.count)]))
            do {
                for (uid, name) in try call(ManagerInterface.getUserNames, parameters).names {
                    if let uid = UInt32(uid) { names[uid] = name }
                }
            } catch where [ServiceInterface.Errors.methodNotFound, ServiceInterface.Errors.permissionDenied].contains(error.remoteErrorName) {
                return [:]
            }
        }
        return names
    }

    /// The connected socket's descriptor (``VarlinkClient/socketDescriptor``).
    var socketDescriptor: Int32 { client.socketDescriptor }

    /// Blocks until orchd closes this connection; see ``VarlinkClient/waitForClose()``.
    /// - Throws: ``CommandFailure`` when reading fails.
    func waitForClose() throws(CommandFailure) {
        do {
            try client.waitForClose()
        } catch {
            throw CommandFailure(error, socket: socket, afterReply: hasReplied, uid: uid)
        }
    }

    /// Calls a method that changes many jobs (`Cancel`, `RetryFailed`) with `more`, so that
    /// orchd sends its answer in pages and never refuses it for its size, and hands each page
    /// to `body`, which returns how many of the page's jobs were changed.
    /// - Parameter change: the change, as the error below names it ("cancel", "retry").
    /// - Throws: ``CommandFailure``; when orchd closes the connection after a page (it is
    ///   stopping), one that says the change was done and how many changed jobs were received
    ///   (exit 69): orchd sends the first page only once the whole change is done.
    func streamChange<P, R>(
        _ method: VarlinkMethod<P, R>, _ parameters: P, change: String, _ body: (R) throws(CommandFailure) -> Int
    ) throws(CommandFailure) {
        var pages = 0
        var received = 0
        do {
            try stream(method, parameters) { (reply) throws(CommandFailure) in
                pages += 1
                received += try body(reply)
            }
        } catch where error.isConnectionLoss && pages > 0 {
            var failure = CommandFailure(
                "orchd closed the connection before its answer was complete (it is stopping or it failed): the \(change) was done, and \(JobTable.grouped(received)) of its jobs were received, perhaps not all; see 'orchctl status'",
                exitCode: .unavailable)
            failure.isConnectionLoss = true
            throw failure
        }
    }

    /// Calls `method` with `more` and hands each reply to `body` until the last one.
    /// - Throws: ``CommandFailure``, for client errors and whatever `body` throws.
    func stream<P, R>(
        _ method: VarlinkMethod<P, R>, _ parameters: P, _ body: (R) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        try streamWhile(method, parameters) { (reply) throws(CommandFailure) -> Bool in
            try body(reply)
            return true
        }
    }

    /// Calls `method` with `more` and hands each reply to `body` until the last one, or until
    /// `body` returns `false` (the rest of the stream is not read).
    /// - Throws: ``CommandFailure``, for client errors and whatever `body` throws.
    func streamWhile<P, R>(
        _ method: VarlinkMethod<P, R>, _ parameters: P, _ body: (R) throws(CommandFailure) -> Bool
    ) throws(CommandFailure) {
        var refusals = RefusalRetry()
        while true {
            var streamed = false
            do {
                try client.stream(method, parameters) { reply in
                    hasReplied = true
                    streamed = true
                    Self.retrying.store(false, ordering: .relaxed)
                    return try body(reply)
                }
                return
            } catch let failure as CommandFailure {
                throw failure
            } catch let error as VarlinkClientError {
                // Refused before its first reply: nothing of it was done.
                if !streamed, case .remote(let remote) = error, try refusals.reconnectAfter(remote, of: method.name, self) { continue }
                if case .remote = error { hasReplied = true }
                throw CommandFailure(error, socket: socket, afterReply: hasReplied, uid: uid)
            } catch {
                throw CommandFailure("\(error)")
            }
        }
    }
}
