import Dispatch
import Foundation
import Glibc
import CPosix
import OrchestratorAPI
import Synchronization

/// Accepts connections on a listening Unix socket and serves Varlink on each.
///
/// The listening fd comes from ``ControlSocket`` (bound here) or from systemd socket
/// activation; the server owns it once started.
public final class VarlinkServer: Sendable {
    private let listeningFD: Int32
    private let service: VarlinkService
    private let queue = DispatchQueue(label: "orchd.accept")
    private let state = Mutex<State>(State())
    private let maximumMessageBytes: Int
    /// Refusals for want of descriptors are logged once every 10 s at most.
    private let refusalLogging = RateLimiter(interval: .seconds(10))
    /// Pauses of accepting are logged once a second at most: each connection that closes
    /// resumes accepting.
    private let pauseLogging = RateLimiter(interval: .seconds(1))
    /// The bytes each user's connections hold for them (calls not handled, replies not read).
    let bufferBudget = UserBufferBudget()

    private struct State {
        var watch: EpollLoop.Watch?
        var connections: [ObjectIdentifier: VarlinkConnection] = [:]
        var stopped = false
        /// Accepting is paused: orchd is out of file descriptors.
        var acceptPaused = false
        /// Open connections by the peer's uid.
        var connectionsByUID: [UInt32: Int] = [:]
    }

    /// The most connections one user other than root and the daemon's own user may hold:
    /// well beyond any real use, well under the system service's descriptor limit
    /// (`LimitNOFILE=65536`), so one user cannot shut every other out.
    static let maximumConnectionsPerUser = 1024

    /// How long accepting pauses when orchd is out of file descriptors, unless a connection
    /// closes first.
    static let descriptorShortagePause = DispatchTimeInterval.seconds(1)

    /// When orchd is out of file descriptors, connections idle at least this long (in
    /// nanoseconds) are closed, the longest idle first, at most ``idleClosedPerShortage`` at a
    /// time: otherwise clients that connect and send nothing, root's or the daemon's own user's
    /// (``maximumConnectionsPerUser`` exempts them), shut every other client out for as long
    /// as they like. A connection handling a call (a Wait, a followed log or event stream) is
    /// never idle; one just accepted gets a second to send its call.
    static let minimumIdleToCloseNanoseconds: UInt64 = 1_000_000_000
    static let idleClosedPerShortage = 64

    /// Creates a server; nothing is accepted before ``start()``.
    /// - Parameters:
    ///   - listeningFD: a listening `SOCK_STREAM` Unix socket, non-blocking or not.
    ///   - service: the method dispatcher.
    ///   - maximumMessageBytes: the size cap of one call (default 1 MiB).
    init(listeningFD: Int32, service: VarlinkService, maximumMessageBytes: Int = 1 << 20) {
        self.listeningFD = listeningFD
        self.service = service
        self.maximumMessageBytes = maximumMessageBytes
    }

    /// Starts accepting connections.
    public func start() {
        let flags = fcntl(listeningFD, F_GETFL)
        _ = fcntl(listeningFD, F_SETFL, flags | O_NONBLOCK)
        // Under the lock, so a stop() meanwhile finds the watch to cancel.
        state.withLock { state in
            guard !state.stopped else { return }
            state.watch = EpollLoop.shared.watch(listeningFD, for: .readable, on: queue) { [weak self] _, _ in
                self?.acceptPending()
            }
        }
    }

    /// Stops accepting, closes the listening socket and every connection, and returns once
    /// they are closed: each answers the call it was handling first
    /// (``VarlinkConnection/close(then:)``), so the process does not exit under that reply.
    public func stop() {
        let (watch, connections) = state.withLock { state in
            state.stopped = true
            defer { state.watch = nil; state.connections = [:]; state.acceptPaused = false }
            return (state.watch, Array(state.connections.values))
        }
        let fd = listeningFD
        watch?.cancel { Glibc.close(fd) }
        let closed = DispatchGroup()
        for connection in connections {
            closed.enter()
            connection.close { closed.leave() }
        }
        // Each connection closes within its grace; the margin is for a busy machine.
        if closed.wait(timeout: .now() + VarlinkConnection.closingGrace + .seconds(1)) == .timedOut {
            DaemonLog.warning("some connections were still closing when the control socket stopped")
        }
    }

    private func acceptPending() {
        while true {
            let fd = cposix_accept_cloexec_nonblock(listeningFD)
            if fd < 0 {
                // EAGAIN: drained. Out of file descriptors, the pending connection stays
                // queued and the socket stays readable: accepting pauses until a connection
                // closes or a second has passed, instead of spinning on the readiness event
                // (any local user can open connections until orchd runs out). Other errors
                // concern one client; the next readiness event goes on.
                let code = errno
                if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM { pauseAccepting() }
                return
            }
            // accept(2) gives the lowest free number: one this high means few are left.
            let reserve = Self.descriptorReserve(below: fd)
            guard let peer = PeerCredentials.of(socket: fd) else {
                Glibc.close(fd)
                continue
            }
            let uid = peer.uid
            let exempt = uid == 0 || uid == geteuid()
            let connection = VarlinkConnection(
                fd: fd, peer: peer, service: service, maximumMessageBytes: maximumMessageBytes,
                bufferBudget: exempt ? nil : bufferBudget,
                onClose: { [weak self] connection in
                    guard let self else { return }
                    let removed = state.withLock { state -> Bool in
                        guard state.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return false }
                        state.connectionsByUID[uid, default: 1] -= 1
                        if state.connectionsByUID[uid] == 0 { state.connectionsByUID[uid] = nil }
                        return true
                    }
                    // A refused connection never held a place: its close makes no room.
                    if removed { resumeAccepting() }
                })
            // Deep in the reserve, the connection idle longest (for a second at least: one just
            // accepted gets that long to send its call) makes room for the new one. Without
            // one, the new connection is served and accepting pauses until a connection closes
            // or a second has passed; in the last ``refusingDescriptors`` it is refused.
            let madeRoom = reserve >= .deep && closeIdleConnections(limit: 1, logging: false).closing > 0
            let outcome = state.withLock { state -> Admission in
                guard !state.stopped else { return .closed }
                guard reserve < .critical || madeRoom else { return .shortOfDescriptors }
                guard exempt || state.connectionsByUID[uid, default: 0] < Self.maximumConnectionsPerUser else { return .refused }
                state.connections[ObjectIdentifier(connection)] = connection
                state.connectionsByUID[uid, default: 0] += 1
                return .accepted
            }
            switch outcome {
            case .accepted:
                connection.start()
                if reserve == .entered { closeIdleConnections(logging: false) }
                if reserve == .deep && !madeRoom {
                    pauseAccepting()
                    return
                }
            case .closed: connection.close()
            case .refused:
                connection.refuse(VarlinkError(ManagerInterface.Errors.tooManyConnections, [
                    "message": .string("uid \(uid) already has \(Self.maximumConnectionsPerUser) connections to orchd; closing this one")
                ]))
            case .shortOfDescriptors:
                if refusalLogging.allows() {
                    DaemonLog.warning(
                        "out of file descriptors: refusing connections, the last \(Self.refusingDescriptors) are kept for running jobs (\(state.withLock { $0.connections.count }) open)")
                }
                connection.refuse(VarlinkError(ManagerInterface.Errors.tooManyConnections, [
                    "message": .string("orchd is short of file descriptors (the last \(Self.refusingDescriptors) are kept for running jobs); try again in a moment")
                ]))
            }
        }
    }

    /// What becomes of an accepted connection.
    private enum Admission { case accepted, refused, closed, shortOfDescriptors }

    /// The file descriptors kept from connections for orchd's own use: launches, the job
    /// database, logs, and libdispatch, whose thread pool monitor ends the process when it
    /// cannot open a thread's `/proc` file.
    static let reservedDescriptors = 32
    /// The last of them, which no connection ever gets: a new client past them is refused. Two
    /// launches' worth (``LocalExecutor/descriptorsPerLaunch``), since launches keep one worth
    /// back and go on only with a second free, and a few for what orchd opens for a moment (the
    /// listing that counts them, a hook, the WAL): clients waiting on jobs (`submit --wait`)
    /// that left fewer kept those jobs from starting, and themselves waiting for ever.
    static let refusingDescriptors = 2 * LocalExecutor.descriptorsPerLaunch + 4

    /// How far an accepted connection's descriptor reaches into ``reservedDescriptors``.
    enum ReserveUse: Int, Comparable {
        /// Below the reserve.
        case outside
        /// In the reserve's first part (32 to 26 left): connections idle for
        /// ``minimumIdleToCloseNanoseconds`` are closed.
        case entered
        /// Halfway to ``refusingDescriptors`` (26 to 20 left): the connection idle longest, if
        /// for a second or more, closes for the new one; without one, accepting pauses.
        case deep
        /// In ``refusingDescriptors`` (the last 20): as deep, but without an idle connection to
        /// close the new one is refused with an error.
        case critical

        static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Where descriptor `fd`, the lowest free one when it was opened, stands against the
    /// reserve under the process's soft `RLIMIT_NOFILE` (getrlimit(2)): every descriptor below
    /// it is in use, so at most those above it are free.
    static func descriptorReserve(below fd: Int32) -> ReserveUse {
        guard let limit = DescriptorRelief.softLimit() else { return .outside }
        let left = limit - Int(fd) - 1
        switch left {
        case ..<refusingDescriptors: return .critical
        case ..<((refusingDescriptors + reservedDescriptors) / 2): return .deep
        case ..<reservedDescriptors: return .entered
        default: return .outside
        }
    }

    /// Stops waiting for connections while orchd is out of file descriptors, and waits again after
    /// ``descriptorShortagePause`` (a closing connection resumes it sooner).
    private func pauseAccepting() {
        let paused = state.withLock { state -> Bool in
            guard !state.stopped, !state.acceptPaused, let watch = state.watch else { return false }
            state.acceptPaused = true
            watch.setInterest([])
            return true
        }
        guard paused else { return }
        let (open, closing) = closeIdleConnections(logging: false)
        if pauseLogging.allows() || closing > 0 {
            let closed = closing == 0 ? "" : "; closing the \(closing) longest idle"
            DaemonLog.warning("out of file descriptors: not accepting connections for a moment (\(open) open\(closed))")
        }
        queue.asyncAfter(deadline: .now() + Self.descriptorShortagePause) { [weak self] in self?.resumeAccepting() }
    }

    /// Closes the connections idle at least ``minimumIdleToCloseNanoseconds``, the longest idle
    /// first and at most ``idleClosedPerShortage``, for a daemon out of file descriptors. Each
    /// close resumes accepting (the connection's `onClose`), so the next client gets in.
    /// - Parameters:
    ///   - minimumIdleNanoseconds: how long a connection must have been idle to be closed.
    ///   - limit: the most connections closed.
    ///   - logging: say in orchd's log how many are closed, when any are.
    /// - Returns: how many connections were open, and how many of them are being closed.
    @discardableResult
    func closeIdleConnections(
        minimumIdleNanoseconds: UInt64 = minimumIdleToCloseNanoseconds, limit: Int = idleClosedPerShortage,
        logging: Bool = true
    ) -> (open: Int, closing: Int) {
        let connections = state.withLock { Array($0.connections.values) }
        let now = DispatchTime.now().uptimeNanoseconds
        let idle = connections
            .map { (connection: $0, since: $0.idleSinceUptime) }
            .filter { $0.since != 0 && $0.since <= now && now - $0.since >= minimumIdleNanoseconds }
            .sorted { $0.since < $1.since }
            .prefix(limit)
        for candidate in idle { candidate.connection.closeIfIdle() }
        if logging && !idle.isEmpty {
            DaemonLog.warning("out of file descriptors: closing the \(idle.count) longest idle of \(connections.count) connections")
        }
        return (connections.count, idle.count)
    }

    /// Waits for connections again if accepting was paused.
    private func resumeAccepting() {
        state.withLock { state in
            guard state.acceptPaused, !state.stopped, let watch = state.watch else { return }
            state.acceptPaused = false
            watch.setInterest(.readable)
        }
    }
}
