#if canImport(Glibc)
import CommandLineParsing
import Glibc
#endif
import OrchestratorAPI
import Synchronization

/// Carries a command that follows orchd (`wait`, `logs -f`, `events --follow`,
/// `submit --wait`) through a restart of the daemon: when the connection is lost after orchd
/// was reached, it says so once on standard error, connects again with back-off for up to
/// ``timeout``, and runs the command's step again, which resumes from what it recorded (the
/// last event's seq, the log offset reached, the same job IDs).
///
/// orchd not answering at the very start stays an immediate error (exit 69): it is not
/// running, which waiting would only hide. Between tries the socket's directory is watched
/// with inotify(7), so a restarted orchd is reached as soon as it creates its socket; the
/// back-off (0.1 s doubling to 2 s) is the timeout of that wait, for a socket that was never
/// removed (systemd socket activation, a crash).
struct Reconnection: Sendable {
    /// How long ``timeout`` is when `--reconnect-timeout` is not given.
    static let defaultTimeout = Duration.seconds(60)
    /// The `--reconnect-timeout` option's help.
    static let optionHelp = "When orchd goes away (a restart), keep trying to reconnect this long and resume (then exit 69); 0 gives up at once."

    /// The socket to reach orchd on.
    var socket: String
    /// The caller's uid, for messages.
    var uid: UInt32
    /// How long to keep trying after the connection was lost; zero: not at all.
    var timeout: Duration
    /// Where the message goes.
    var console: Console
    /// The outages already said, when several streams of one command share them (`logs -f
    /// --both`): one restart of orchd is said once, not once per stream. `nil`: this
    /// reconnection's own.
    var notices: OutageNotices?

    /// The outages said so far, shared by the streams of one command.
    final class OutageNotices: Sendable {
        private let said = Mutex(0)

        /// How many outages have been said.
        var count: Int { said.withLock { $0 } }

        /// Whether the loss of a connection made when `seen` outages had been said is to be
        /// said: only by the first stream to lose one, the others' losses being the same
        /// restart.
        func claim(after seen: Int) -> Bool {
            said.withLock { count in
                guard count == seen else { return false }
                count += 1
                return true
            }
        }
    }

    /// Creates a reconnection for `context` and `invocation`'s socket.
    init(context: CommandContext, invocation: Invocation, timeout: Duration?) throws(CommandFailure) {
        self.init(socket: try context.socket(for: invocation), uid: context.uid, timeout: timeout ?? Self.defaultTimeout, console: context.console)
    }

    /// Creates a reconnection with every field given.
    init(socket: String, uid: UInt32, timeout: Duration, console: Console) {
        self.socket = socket
        self.uid = uid
        self.timeout = timeout
        self.console = console
    }

    /// Runs `step` with a connection until it returns, reconnecting when it loses the
    /// connection (``CommandFailure/isConnectionLoss``).
    /// - Parameters:
    ///   - connection: a connection already open (`submit --wait` waits on the one it
    ///     submitted on); `nil` opens one, and failing to is reported at once.
    ///   - step: one try; it must resume from what an earlier try recorded.
    /// - Returns: what `step` returned.
    /// - Throws: what `step` throws for other reasons, or a ``CommandFailure`` (exit 69) when
    ///   orchd did not come back within ``timeout``.
    func run<Value>(
        with connection: OrchdConnection? = nil, _ step: (OrchdConnection) throws(CommandFailure) -> Value
    ) throws(CommandFailure) -> Value {
        var current: OrchdConnection
        if let connection { current = connection } else { current = try OrchdConnection(socket: socket, uid: uid) }
        // One outage lasts until a new connection has answered: a connection lost before that
        // is part of it, with the same deadline and no second message. (A killed orchd's
        // listening socket can outlive the connection it closed first by an instant, so the
        // first reconnect may land in a backlog that is then reset.)
        var outageDeadline: ContinuousClock.Instant?
        var seen = notices?.count ?? 0
        while true {
            do throws(CommandFailure) {
                return try step(current)
            } catch where error.isConnectionLoss && timeout > .zero {
                let now = ContinuousClock.now
                if current.hasReplied || outageDeadline.map({ now >= $0 }) ?? true {
                    if notices?.claim(after: seen) ?? true {
                        console.printError(
                            "orchctl: lost the connection to orchd at \(socket); reconnecting for up to \(TimeSpan.format(timeout))...")
                    }
                    outageDeadline = now + timeout
                }
                current = try reconnect(until: outageDeadline ?? now + timeout)
                seen = notices?.count ?? 0
            }
        }
    }

    /// Runs `call`, a submit, until an orchd takes it: while orchd stops (a restart) it refuses
    /// submits with `Stopping` and stores nothing, so the call is made again, for up to
    /// ``timeout``, after a back-off (0.1 s doubling to 2 s, cut short when the socket's
    /// directory changes). It says so once on standard error.
    ///
    /// Only a call that cannot have been stored is made again: one refused with `Stopping`,
    /// one whose connection is lost after its orchd said `Stopping` (that orchd refuses
    /// every submit until it exits), or one whose connection broke while it was being sent
    /// (orchd never had all of it: ``CommandFailure/wasNotDelivered``); then a new connection
    /// is made. A connection lost in any other call is thrown as it is, since orchd may have
    /// stored that call.
    /// - Parameters:
    ///   - connection: the connection to call on; replaced by the new one after a restart.
    ///   - call: the request.
    /// - Returns: what `call` returned.
    /// - Throws: what `call` throws for other reasons, or a ``CommandFailure`` (exit 69) when
    ///   no orchd took the call within ``timeout`` (at once for a ``timeout`` of zero).
    func runRefusedWhileStopping<Value>(
        on connection: inout OrchdConnection, _ call: (OrchdConnection) throws(CommandFailure) -> Value
    ) throws(CommandFailure) -> Value {
        var deadline: ContinuousClock.Instant?
        var backoff = Duration.milliseconds(100)
        var saidStopping = false
        var watch: DirectoryWatch?
        while true {
            do throws(CommandFailure) {
                return try call(connection)
            } catch where error.remoteErrorName == JobsInterface.Errors.stopping && timeout > .zero {
                saidStopping = true
                let now = ContinuousClock.now
                if deadline == nil {
                    console.printError("orchctl: orchd at \(socket) is stopping and took nothing; submitting again for up to \(TimeSpan.format(timeout))...")
                    deadline = now + timeout
                    watch = DirectoryWatch(directory: Self.directory(of: socket))
                }
                guard let deadline, now < deadline else {
                    throw CommandFailure(
                        "orchd is stopping and takes no new jobs, so nothing was stored, and no orchd took the job within \(TimeSpan.format(timeout)) (see --reconnect-timeout)",
                        exitCode: .unavailable, remoteErrorName: JobsInterface.Errors.stopping)
                }
                watch?.waitForChange(timeout: min(backoff, deadline - now))
                backoff = min(backoff * 2, .seconds(2))
            } catch where error.isConnectionLoss && (saidStopping || (error.wasNotDelivered && timeout > .zero)) {
                // The stopping orchd exited, or closed the connection before it had the whole
                // call (a stop while a batch was being sent): its successor gets the call on a
                // new connection.
                if !saidStopping && deadline == nil {
                    console.printError("orchctl: orchd at \(socket) closed the connection before it had the request, so it took nothing; submitting again for up to \(TimeSpan.format(timeout))...")
                    deadline = .now + timeout
                }
                saidStopping = false
                do throws(CommandFailure) {
                    connection = try reconnect(until: deadline ?? .now + timeout)
                } catch where error.exitCode == .unavailable {
                    throw CommandFailure(
                        "orchd stopped without taking the job, so nothing was stored, and no orchd came back within \(TimeSpan.format(timeout)) (see --reconnect-timeout)",
                        exitCode: .unavailable)
                }
            }
        }
    }

    /// Connects again, retrying until `deadline`.
    /// - Throws: ``CommandFailure``: 69 naming the timeout when orchd did not come back, or a
    ///   failure that is not about orchd being gone (permission denied).
    private func reconnect(until deadline: ContinuousClock.Instant) throws(CommandFailure) -> OrchdConnection {
        let watch = DirectoryWatch(directory: Self.directory(of: socket))
        var backoff = Duration.milliseconds(100)
        while true {
            do throws(CommandFailure) {
                return try OrchdConnection(socket: socket, uid: uid)
            } catch where error.isConnectionLoss {
                let left = deadline - ContinuousClock.now
                guard left > .zero else {
                    throw CommandFailure(
                        "lost the connection to orchd at \(socket), and it did not come back within \(TimeSpan.format(timeout)) (see --reconnect-timeout)",
                        exitCode: .unavailable)
                }
                watch.waitForChange(timeout: min(backoff, left))
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }

    /// The directory holding `path` (`.` for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// An inotify(7) watch on a directory, for a socket being created in it.
    private final class DirectoryWatch {
        private let descriptor: Int32

        init(directory: String) {
            let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            if fd >= 0, inotify_add_watch(fd, directory, UInt32(IN_CREATE | IN_MOVED_TO | IN_ATTRIB)) < 0 {
                close(fd)
                descriptor = -1
            } else {
                descriptor = fd
            }
        }

        deinit {
            if descriptor >= 0 { close(descriptor) }
        }

        /// Returns when something is created in the directory, or after `timeout` (when the
        /// directory cannot be watched, the timeout alone paces the tries).
        func waitForChange(timeout: Duration) {
            let (seconds, attoseconds) = timeout.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            // A negative fd makes poll(2) ignore the entry and only time out.
            _ = poll(&entry, 1, max(milliseconds, 1))
            if descriptor >= 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            }
        }
    }
}
