#if canImport(Glibc)
import Glibc
#endif
import CommandLineParsing
import OrchestratorAPI

/// A failure a command reports to the user: the message after `Error: ` and the exit code.
///
/// Only orchctl turns errors into exit codes (STYLE.md item 2); ``init(_:socket:afterReply:uid:)``
/// is the one place that maps a ``VarlinkClientError``.
struct CommandFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, without the `Error: ` prefix.
    var message: String
    /// The exit status it leads to.
    var exitCode: ExitCode
    /// The Varlink error name when the daemon answered with an error (`io.orchd.Jobs.NoSuchJob`),
    /// `nil` for failures of the connection or of orchctl itself.
    var remoteErrorName: String?
    /// The `id` parameter of the daemon's error (`NoSuchJob(id)`), when it has one.
    var remoteJobID: JobID?
    /// The `name` parameter of the daemon's error (`UnknownQueue(name, known)`), when it has one.
    var remoteName: String?
    /// Whether orchd went away or is not there (nothing listens, or the connection closed),
    /// as opposed to refusing the request: a command that follows orchd can reconnect.
    var isConnectionLoss = false
    /// Whether the connection broke before orchd had the whole call, so that nothing of it was
    /// done (``VarlinkClientError/callNotDelivered(errno:)``): a submit may be sent again.
    var wasNotDelivered = false

    /// Creates a failure.
    init(_ message: String, exitCode: ExitCode = .failure, remoteErrorName: String? = nil) {
        self.message = message
        self.exitCode = exitCode
        self.remoteErrorName = remoteErrorName
    }

    /// Maps a Varlink client error to a message and an exit code scripts can tell apart:
    /// daemon unreachable or stopping 69, permission denied 77, everything else the daemon says 1.
    /// - Parameters:
    ///   - error: what the client threw.
    ///   - socket: the socket path, for messages.
    ///   - afterReply: whether the daemon had already answered on this connection: a connection
    ///     lost before that says the daemon is stopping or failed; after it, that it went away
    ///     mid-request. Either is 69, as README's exit codes promise for a connection closed
    ///     before answering.
    ///   - uid: the caller's uid, to suggest the system or the user service.
    ///   - plainOrchdSocket: the socket an `orchd` started with no options in another terminal
    ///     would serve for this caller (``plainOrchdSocket(uid:)``), so that the hint to start
    ///     one names `--socket` when the socket is another.
    init(
        _ error: VarlinkClientError, socket: String, afterReply: Bool, uid: UInt32,
        plainOrchdSocket: @autoclosure () -> String = CommandFailure.plainOrchdSocket(uid: getuid())
    ) {
        switch error {
        case .connectFailed(_, let code) where code == EACCES || code == EPERM:
            self.init(
                "permission denied on orchd's socket \(socket) (\(Self.errnoText(code))). Ask an administrator for access, or use --socket to reach your own orchd.",
                exitCode: .permissionDenied)
        case .connectFailed(_, let code):
            self.init(
                "cannot reach orchd at \(socket) (\(Self.errnoText(code))). Is it running? \(Self.startHint(uid: uid, socket: socket, plainOrchdSocket: plainOrchdSocket()))",
                exitCode: .unavailable)
            isConnectionLoss = true
        case .pathTooLong(let path):
            self.init("the socket path is too long (at most 107 bytes): \(path)", exitCode: .usage)
        case .connectionLost(let code):
            let why = code == 0 ? "" : " (\(Self.errnoText(code)))"
            if afterReply {
                // 69 as well: the request was not answered, and 1 means "the job failed" to a
                // script running `wait` or `cancel`.
                self.init(
                    "orchd closed the connection\(why) before the request completed: it is stopping or it failed. What was asked may have been done; check 'orchctl status'.",
                    exitCode: .unavailable)
            } else {
                // The request may have been read: a submit may be stored although unanswered.
                self.init(
                    "orchd at \(socket) closed the connection\(why) before answering: it is stopping or it failed. What was asked may have been done; check 'orchctl status' before trying again.",
                    exitCode: .unavailable)
            }
            isConnectionLoss = true
        case .callNotDelivered(let code):
            self.init(
                "orchd at \(socket) closed the connection (\(Self.errnoText(code))) before it had the whole request, so nothing of it was done: it is stopping or it failed",
                exitCode: .unavailable)
            isConnectionLoss = true
            wasNotDelivered = true
        case .protocolViolation(let what):
            self.init("unexpected answer from orchd at \(socket): \(what)", exitCode: .failure)
        case .remote(let remote):
            self.init(remote.description, exitCode: Self.exitCode(for: remote), remoteErrorName: remote.name)
            switch remote.parameters["id"] {
            case .integer(let raw)?: remoteJobID = JobID(rawValue: raw)
            // From an orchd that wrote IDs through a Double: exact only up to 2^53.
            case .number(let id)?: remoteJobID = Int64(exactly: id).map(JobID.init(rawValue:))
            default: break
            }
            if case .string(let name)? = remote.parameters["name"] { remoteName = name }
        }
    }

    /// How to start an orchd that serves `socket`, for a caller that could not reach one.
    ///
    /// The units are offered only where systemd is the init system, which it is when
    /// /run/systemd/system exists (the test sd_booted(3) makes). A plain `orchd` is offered only
    /// for the socket it would serve; for any other socket (a `--socket` of the caller's), the
    /// hint is `orchd --socket` with that path. A user other than root who was pointed at the
    /// system service's socket is told that an administrator starts it, or that their own
    /// `orchd` would serve them: orchctl prefers a user's own orchd when one runs.
    /// - Parameters:
    ///   - uid: the caller's uid.
    ///   - socket: the socket that could not be reached.
    ///   - plainOrchdSocket: the socket `orchd` with no options would serve for this caller.
    ///   - systemdBooted: whether systemd is the init system.
    static func startHint(uid: UInt32, socket: String, plainOrchdSocket: String, systemdBooted: Bool = Self.systemdBooted) -> String {
        if uid != 0, socket == OrchdPaths.systemSocket {
            let administrator = systemdBooted ? "an administrator starts it with 'systemctl start orchd'" : "an administrator starts it"
            return "It is the system service's socket: \(administrator); or run your own with 'orchd' in another terminal."
        }
        guard socket == plainOrchdSocket else {
            return "Start one that serves it in another terminal: orchd --socket \(ArgumentParser.shellQuoted(socket))"
                + " (with --state-dir DIR of its own when another orchd uses the default state directory)"
        }
        guard systemdBooted else {
            // Root's plain orchd is the system one, which scripts/install.sh starts this way
            // where systemd is not the init system: in a session of its own, logging to a file.
            guard uid == 0 else { return "Start it by running 'orchd' in another terminal." }
            return "Start it by running 'orchd' in another terminal, or in the background:"
                + " setsid -f orchd </dev/null >>/var/log/orchd.log 2>&1"
        }
        let service = uid == 0 ? "systemctl start orchd" : "systemctl --user start orchd"
        return "Start it with '\(service)' or run 'orchd' in another terminal."
    }

    /// The socket `orchd` with no options serves for `uid`, started from a terminal of this
    /// session: orchctl's environment without `$ORCHD_SOCKET`, which a new terminal need not
    /// have (the systemd and XDG variables it does have).
    static func plainOrchdSocket(uid: UInt32) -> String {
        var environment = ProcessEnvironment.current.variables
        environment["ORCHD_SOCKET"] = nil
        return OrchdPaths.socket(explicit: nil, environment: environment, uid: uid)
    }

    /// Whether systemd is the init system (sd_booted(3)).
    static var systemdBooted: Bool {
        var status = stat()
        return lstat("/run/systemd/system", &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The exit code for an error reply.
    static func exitCode(for error: VarlinkError) -> ExitCode {
        switch error.name {
        case ServiceInterface.Errors.permissionDenied, JobsInterface.Errors.permissionDenied: .permissionDenied
        case JobsInterface.Errors.stopping, ManagerInterface.Errors.tooManyConnections: .unavailable
        default: .failure
        }
    }

    private static func errnoText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    var description: String { message }
}
