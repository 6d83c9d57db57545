import Dispatch
import Foundation
import Glibc
import OrchestratorAPI
import Synchronization

/// One client connection: reads NUL-framed calls, hands them one at a time to the service,
/// and writes the replies in order.
///
/// Everything runs on the connection's own serial queue, so a slow or vanished client never
/// blocks another client or the control queue. The socket is non-blocking: replies the
/// client does not read yet wait in an outbox, flushed when the socket drains (its
/// ``EpollLoop`` watch then also waits for room); no thread ever blocks on a client. Replies
/// are encoded here too, not on the queue that produced them. A client whose outbox passes
/// ``maximumOutboxBytes`` is dropped; a single reply that large is replaced by a
/// `ReplyTooLarge` error.
///
/// Streamed replies are paced by the reader: a producer asks for room
/// (``VarlinkResponder/whenReady(_:)``, usually through a ``ReplyPacer``) and produces its next
/// replies only once the outbox has drained below ``lowWaterBytes``. So a client that reads
/// gets a stream of any length in bounded daemon memory, and only a client that stops reading
/// ever reaches the cap.
///
/// An actor on the connection's queue (``DispatchQueueExecutor``): its watch fires there and
/// replies hop there, entering the actor with `assumeIsolated`.
actor VarlinkConnection {
    private let fd: Int32
    private let peer: PeerCredentials
    private let executor: DispatchQueueExecutor
    private nonisolated var queue: DispatchQueue { executor.queue }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let service: VarlinkService
    /// Readiness of the socket: readable always, writable while replies wait for room.
    private var watch: EpollLoop.Watch?
    private var awaitsRoom = false
    /// Encoded replies not yet accepted by the socket, from `outboxStart`.
    private var outbox: [UInt8] = []
    private var outboxStart = 0
    /// A client that lets this many bytes of replies pile up is dropped.
    static let maximumOutboxBytes = 64 << 20
    /// A paced stream's next replies are produced once the outbox holds at most this many
    /// bytes: enough to keep the socket busy, little enough to stay far from the cap.
    static let lowWaterBytes = 1 << 20
    /// Producers waiting for the outbox to drain to ``lowWaterBytes``, in the order they asked.
    private var roomWaiters: [@Sendable () -> Void] = []
    private var frames: VarlinkFrameDecoder
    /// Where each read lands: allocated once and never zeroed (only the bytes a read returned
    /// are looked at); zeroing it was a tenth of orchd's work for a one-call connection.
    private var readBuffer = [UInt8](unsafeUninitializedCapacity: 65536) { _, initializedCount in initializedCount = 65536 }
    /// Calls received but not yet handed to the service: Varlink replies must keep call order.
    private var pending: [VarlinkMethodCall] = []
    /// The bytes of the calls in ``pending``.
    private var pendingBytes = 0
    /// Reading stopped because ``pending`` is full; it goes on once half of it is handled.
    private var readPaused = false
    /// The most calls, and bytes of calls, read ahead of the one being handled. Past them the
    /// rest waits in the socket, and its sender blocks: a client that pipelined calls behind
    /// one that takes long (a Wait) grew orchd by six times what it sent, 5.8 GB for 1 GB.
    static let maximumPendingCalls = 1_000
    static let maximumPendingBytes = 4 << 20
    /// A call is being handled and has not sent its final reply.
    private var isBusy = false
    /// The method of the call being handled, for a stop to know whether it may wait for it.
    private var busyMethod = ""
    /// The daemon's stop asked to close (``close(then:)``): nothing more is read, and the call
    /// being handled is answered first.
    private var isClosing = false
    /// Nothing more is read: the client shut down its side of the connection (shutdown(2)
    /// with `SHUT_WR`, as `nc -N` and `socat` do after their input), or sent something that is
    /// not a call. The calls read before are still handled and answered in order, then
    /// ``finalError`` (when there is one) is sent and the connection closes.
    private var readEnded = false
    /// The error that answers what ended the reading, sent after the replies owed before it.
    private var finalError: VarlinkError?
    /// Run once the socket is closed, for the stop that waits for it.
    private var closedCallbacks: [@Sendable () -> Void] = []
    private var isClosed = false
    /// The longest a stop waits for the call being handled to be answered before it closes
    /// the connection all the same.
    static let closingGrace = DispatchTimeInterval.seconds(2)
    /// Readable from any queue: whether the connection is open, and how many replies wait to
    /// be written.
    private let open = Atomic<Bool>(true)
    private let queuedReplies = Atomic<Int>(0)
    /// Bytes in the outbox, readable from any queue.
    private let outboxBytes = Atomic<Int>(0)
    /// Past these, a stream's client counts as backed up (``VarlinkResponder/isBackedUp``).
    static let backedUpReplies = 1_000
    static let backedUpBytes = 4 << 20
    /// A client that lets more replies than this pile up (it stopped reading a stream) is
    /// dropped; it can reconnect and resume, e.g. `orchctl events --since`.
    static let maximumQueuedReplies = 10_000
    private let onClose: @Sendable (VarlinkConnection) -> Void
    /// The user's budget of bytes held for them (calls not handled, replies not read); `nil`
    /// for a user it does not count.
    private let bufferBudget: UserBufferBudget?
    /// What this connection counts in ``bufferBudget`` now.
    private var budgeted = 0
    /// Backs ``idleSinceUptime``.
    private let idleSince = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)

    /// Since when the connection has been idle, no call being handled or read ahead and every
    /// reply taken by the socket (`DispatchTime` uptime, in nanoseconds), or 0 while it is not;
    /// readable from any queue, for ``VarlinkServer`` to pick the longest-idle connections when
    /// orchd runs out of file descriptors.
    nonisolated var idleSinceUptime: UInt64 { idleSince.load(ordering: .relaxed) }

    /// Creates a connection over an accepted socket.
    /// - Parameters:
    ///   - fd: the accepted socket; owned and closed by the connection.
    ///   - peer: the client's credentials.
    ///   - service: dispatches calls to handlers.
    ///   - maximumMessageBytes: calls longer than this are refused and the connection closed.
    ///   - bufferBudget: the bytes the peer's connections may hold for it (calls not handled,
    ///     replies not read), shared by them; `nil` for a peer not counted (root, orchd's own
    ///     user).
    ///   - onClose: called once, on the connection's queue, after the socket is closed.
    init(
        fd: Int32, peer: PeerCredentials, service: VarlinkService, maximumMessageBytes: Int,
        bufferBudget: UserBufferBudget? = nil, onClose: @escaping @Sendable (VarlinkConnection) -> Void
    ) {
        self.fd = fd
        self.peer = peer
        self.service = service
        self.frames = VarlinkFrameDecoder(maximumMessageBytes: maximumMessageBytes)
        self.executor = DispatchQueueExecutor(label: "orchd.connection.\(fd)")
        self.onClose = onClose
        self.bufferBudget = bufferBudget
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    /// Starts reading calls.
    nonisolated func start() {
        queue.async {
            self.assumeIsolated { connection in
                guard !connection.isClosed else { return }
                connection.watch = EpollLoop.shared.watch(connection.fd, for: .readable, on: connection.queue) {
                    [weak connection] _, events in connection?.assumeIsolated { $0.ready(events) }
                }
            }
        }
    }

    /// Sends `error` and closes the connection without reading a call (a connection refused).
    nonisolated func refuse(_ error: VarlinkError) {
        queue.async { self.assumeIsolated { $0.reject(error) } }
    }

    /// Closes the connection if it is still idle when its queue gets to it: no call being
    /// handled or read ahead, and no reply waiting to be sent (a partly sent call is dropped;
    /// nothing of it was acted on). For a daemon out of file descriptors (``VarlinkServer``).
    nonisolated func closeIfIdle() {
        queue.async {
            self.assumeIsolated { connection in
                guard !connection.isClosed, !connection.isBusy, connection.pending.isEmpty,
                      connection.outboxStart >= connection.outbox.count
                else { return }
                connection.shutdown()
            }
        }
    }

    /// Closes the connection from outside: a client that stopped reading, and the daemon's
    /// stop (``close(then:)``).
    nonisolated func close() {
        queue.async { self.assumeIsolated { $0.shutdown() } }
    }

    /// Closes the connection for the daemon's stop, never dropping the answer to a call orchd
    /// has read: nothing more is read, a call being handled gets its final reply first, and
    /// the replies the socket has not taken yet are sent (at most ``closingGrace`` later),
    /// unless the call may wait indefinitely. A call orchd has
    /// read is acted on or refused, and its client must learn which; a submit refused as
    /// orchd stops is then sent again to the next orchd. Bytes left unread make the kernel
    /// reset the connection (`ECONNRESET` at the client, unix(7)'s streams), which tells a
    /// client with one call outstanding that its call was never received.
    /// - Parameter done: runs on the connection's queue once the socket is closed.
    nonisolated func close(then done: @escaping @Sendable () -> Void) {
        queue.async {
            self.assumeIsolated { connection in
                guard !connection.isClosed else { return done() }
                connection.closedCallbacks.append(done)
                connection.isClosing = true
                if connection.isBusy && connection.service.mayWaitIndefinitely(connection.busyMethod) {
                    return connection.shutdown()
                }
                // Readiness now only for room to write (a hang-up or error still comes).
                connection.watch?.setInterest(connection.interest)
                connection.closeOnceAnswered()
                connection.queue.asyncAfter(deadline: .now() + Self.closingGrace) {
                    connection.assumeIsolated { $0.shutdown() }
                }
            }
        }
    }

    /// For a closing connection: closes it once no call is being handled and the socket has
    /// taken every reply; until then the final reply, and ``flush()`` as the socket drains,
    /// call again.
    private func closeOnceAnswered() {
        guard isClosing, !isBusy, outboxStart >= outbox.count else { return }
        shutdown()
    }

    // MARK: - Reading

    /// The readiness the watch waits for: calls to read unless the connection is closing or
    /// ``pending`` is full, and room to write while replies wait for it.
    private var interest: EpollLoop.Events {
        var events: EpollLoop.Events = isClosing || readPaused || readEnded ? [] : .readable
        if awaitsRoom { events.insert(.writable) }
        return events
    }

    /// The socket is ready: room to write for waiting replies, calls (or the end) to read.
    private func ready(_ events: EpollLoop.Events) {
        if awaitsRoom, !events.isDisjoint(with: [.writable, .error, .hangUp]) { flush() }
        if isClosing || readPaused || readEnded {
            // Reading now would take bytes of a call that will never be answered, or grow
            // pending past its cap; a client that hung up is owed nothing more.
            if !events.isDisjoint(with: [.error, .hangUp]) { shutdown() }
            return
        }
        if !isClosed, !events.isDisjoint(with: [.readable, .error, .hangUp]) { readAvailable(events) }
    }

    private func readAvailable(_ events: EpollLoop.Events) {
        let fd = self.fd
        let count = readBuffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            shutdown()
            return
        }
        if count == 0 {
            // Closed (EPOLLHUP: neither side can send): nobody is left to answer. Only shut
            // for writing: the calls it sent are answered.
            if events.contains(.hangUp) { return shutdown() }
            return endReading(with: nil)
        }
        let messages: [[UInt8]]
        do {
            messages = try frames.append(readBuffer[..<count])
        } catch {
            reject(VarlinkError(ManagerInterface.Errors.messageTooLarge, [
                "message": .string("a message exceeded \(frames.maximumMessageBytes) bytes; closing the connection")
            ]))
            return
        }
        // What it holds now, before the calls go to `pending` (where they count the same).
        guard settleBudget(holding: heldBytes + messages.reduce(0) { $0 + $1.count }) else {
            reject(VarlinkError(ManagerInterface.Errors.messageTooLarge, [
                "message": .string("uid \(peer.uid)'s connections hold more than \((bufferBudget?.limit ?? 0) >> 20) MiB of calls orchd has not handled yet and replies not read; closing this one")
            ]))
            return
        }
        for message in messages {
            let data = Data(message)
            // The parser reads the usual header; anything else is the Codable decoder's to judge.
            var header = SubmitDecoder.header(of: data)
            if header == nil {
                // What the parser gives up on, JSONDecoder may still read: JSON that is not
                // strict, or a call with two `method`s (it would run one of them).
                let problem: String? = switch JSONByteReader.strictScan(of: data) {
                case .notStrict: "a message is not valid JSON (RFC 8259) or nests deeper than \(JSONByteReader.strictScanMaximumDepth) levels"
                // The scan stopped there: a repeated top-level name after it would go unseen.
                case .unsafeName: "a call has a member name with more than \(JSONByteReader.maximumNonStarters) combining marks in a row"
                case .repeatedName(let path) where path.count == 1: "a call gives '\(path[0])' twice"
                default: nil
                }
                if let problem {
                    endReading(with: VarlinkError(ManagerInterface.Errors.malformedMessage, ["message": .string("\(problem); closing the connection")]))
                    break
                }
                if let decoded = try? JSONDecoder().decode(VarlinkCallHeader.self, from: data) {
                    header = (decoded.method, decoded.more ?? false, decoded.oneway ?? false)
                }
            }
            guard let header else {
                endReading(with: VarlinkError(ManagerInterface.Errors.malformedMessage, [
                    "message": .string("a message is not a Varlink call (JSON object with a method); closing the connection")
                ]))
                break
            }
            pending.append(VarlinkMethodCall(
                method: header.method, more: header.more, oneway: header.oneway, message: data, peer: peer))
            pendingBytes += data.count
        }
        dispatchNext()
        if !isClosed, !readEnded, pending.count >= Self.maximumPendingCalls || pendingBytes >= Self.maximumPendingBytes {
            readPaused = true
            watch?.setInterest(interest)
        }
    }

    /// Stops reading (``readEnded``); the calls read so far are answered, then `error`.
    private func endReading(with error: VarlinkError?) {
        readEnded = true
        finalError = error
        readPaused = false
        watch?.setInterest(interest)
        closeOnceReadEndedAndAnswered()
    }

    /// Once reading has ended and every call read is answered: sends the final error, if
    /// any, and closes as soon as the socket has taken the replies.
    private func closeOnceReadEndedAndAnswered() {
        guard readEnded, !isClosed, !isBusy, pending.isEmpty, !isClosing else { return }
        if let finalError, let data = Self.encoded(finalError) { write(data) }
        finalError = nil
        isClosing = true
        closeOnceAnswered()
    }

    /// What the connection holds for its client: the calls read and not handled (a message not
    /// yet ended, calls waiting their turn) and the replies the socket has not taken.
    private var heldBytes: Int {
        frames.partialMessageBytes + pendingBytes + (outbox.count - outboxStart)
    }

    /// Counts `bytes` held for the client in the user's budget instead of what was counted before.
    /// - Returns: `false`, counting nothing new, when a growth would pass the budget.
    private func settleBudget(holding bytes: Int) -> Bool {
        guard let bufferBudget, bytes != budgeted else { return true }
        guard bufferBudget.change(peer.uid, by: bytes - budgeted) else { return false }
        budgeted = bytes
        return true
    }

    /// An error reply's bytes.
    private static func encoded(_ error: VarlinkError) -> Data? {
        try? JSONEncoder().encode(VarlinkReply<[String: JSONValue]>(parameters: error.parameters, error: error.name))
    }

    /// Answers a protocol violation with an error and closes: the stream cannot be trusted.
    private func reject(_ error: VarlinkError) {
        if let data = Self.encoded(error) {
            // Best effort: whatever the socket takes now; the connection closes regardless.
            write(data)
        }
        shutdown()
    }

    // MARK: - Dispatch

    private func dispatchNext() {
        guard !isBusy, !isClosed, !pending.isEmpty else { return }
        let call = pending.removeFirst()
        pendingBytes -= call.message.count
        _ = settleBudget(holding: heldBytes)
        if readPaused, pending.count <= Self.maximumPendingCalls / 2, pendingBytes <= Self.maximumPendingBytes / 2 {
            readPaused = false
            watch?.setInterest(interest)
        }
        isBusy = true
        idleSince.store(0, ordering: .relaxed)
        busyMethod = call.method
        let responder = VarlinkResponder(
            send: { [weak self] encode, isFinal in
                guard let self, self.open.load(ordering: .relaxed) else { return }
                if self.queuedReplies.wrappingAdd(1, ordering: .relaxed).newValue > Self.maximumQueuedReplies {
                    DaemonLog.warning("dropping a client (pid \(self.peer.pid)) that stopped reading its replies")
                    self.close()
                    return
                }
                self.queue.async {
                    self.queuedReplies.wrappingSubtract(1, ordering: .relaxed)
                    self.assumeIsolated { $0.deliver(encode, isFinal: isFinal, oneway: call.oneway) }
                }
            },
            isConnected: { [weak self] in self?.open.load(ordering: .relaxed) ?? false },
            isBackedUp: { [weak self] in
                guard let self else { return false }
                return self.queuedReplies.load(ordering: .relaxed) > Self.backedUpReplies
                    || self.outboxBytes.load(ordering: .relaxed) > Self.backedUpBytes
            },
            whenReady: { [weak self] body in
                guard let self else { return body() }
                // Queued behind the replies already handed over, so they count as sent.
                self.queue.async { self.assumeIsolated { $0.whenRoom(body) } }
            },
            more: call.more, oneway: call.oneway)
        service.handle(call, responder: responder)
    }

    private func deliver(_ encode: () -> Data, isFinal: Bool, oneway: Bool) {
        guard !isClosed else { return }
        if !oneway {
            var data = encode()
            if data.count >= Self.maximumOutboxBytes {
                // One reply this large could never be accepted (nor read by orchctl, whose cap
                // is the same): say so instead of dropping a client that did nothing wrong.
                data = Self.replyTooLarge(bytes: data.count)
            }
            write(data)
        }
        if isFinal {
            isBusy = false
            // Calls read behind it are left unanswered: only the one taken is owed a reply.
            if isClosing { return closeOnceAnswered() }
            dispatchNext()
            markIdleIfAnswered()
            closeOnceReadEndedAndAnswered()
        }
    }

    /// Starts the connection's idle time once no call is handled and the socket has taken
    /// every reply: a client that has not read its replies is owed them, and is not idle.
    private func markIdleIfAnswered() {
        guard !isBusy, outboxStart >= outbox.count, idleSince.load(ordering: .relaxed) == 0 else { return }
        idleSince.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    // MARK: - Writing

    /// The error that replaces a reply of `bytes` bytes, too large to send.
    static func replyTooLarge(bytes: Int) -> Data {
        let message = "the reply would be \(bytes) bytes, more than the \(maximumOutboxBytes >> 20) MiB a reply may have; "
            + "ask for less, or call List, Wait, Cancel, CancelMatching or RetryFailed with \"more\" to get their jobs in parts"
        let reply = VarlinkReply<[String: JSONValue]>(
            parameters: ["message": .string(message)], error: ManagerInterface.Errors.replyTooLarge)
        return (try? JSONEncoder().encode(reply)) ?? Data("{\"error\":\"\(ManagerInterface.Errors.replyTooLarge)\"}".utf8)
    }

    /// Runs `body` once the outbox holds at most ``lowWaterBytes``: now, or when the socket
    /// has drained it. A closed connection runs it at once, so the producer learns the client
    /// has gone (``VarlinkResponder/isConnected``) and releases what it holds.
    private func whenRoom(_ body: @escaping @Sendable () -> Void) {
        if isClosed || outbox.count - outboxStart <= Self.lowWaterBytes {
            body()
        } else {
            roomWaiters.append(body)
        }
    }

    /// Hands the room to the waiting producers once the outbox is down to the low-water mark.
    private func offerRoom() {
        guard !roomWaiters.isEmpty, isClosed || outbox.count - outboxStart <= Self.lowWaterBytes else { return }
        let waiters = roomWaiters
        roomWaiters = []
        // Each sends through `queue.async`, so none writes while this runs.
        for waiter in waiters { waiter() }
    }

    /// Queues one message and sends what the socket takes now.
    private func write(_ data: Data) {
        guard !isClosed else { return }
        if outbox.count - outboxStart + data.count > Self.maximumOutboxBytes {
            DaemonLog.warning("dropping a client (pid \(peer.pid)) that stopped reading its replies")
            shutdown()
            return
        }
        outbox.append(contentsOf: data)
        outbox.append(0)
        flush()
        outboxBytes.store(outbox.count - outboxStart, ordering: .relaxed)
        // Replies a user does not read count in their budget too: each connection's own cap
        // (64 MiB) over 1,024 connections let one user grow orchd by gigabytes.
        if !isClosed, !settleBudget(holding: heldBytes) {
            DaemonLog.warning("dropping a client (pid \(peer.pid), uid \(peer.uid)) whose connections hold more than \((bufferBudget?.limit ?? 0) >> 20) MiB of replies it has not read and calls not handled")
            shutdown()
        }
    }

    /// Sends from the outbox until it is empty or the socket is full; in the latter case the
    /// watch calls again once the socket drains.
    private func flush() {
        defer {
            outboxBytes.store(outbox.count - outboxStart, ordering: .relaxed)
            offerRoom()
        }
        while outboxStart < outbox.count {
            let sent = outbox[outboxStart...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    compactOutbox()
                    awaitWritable()
                    return
                }
                // EPIPE, ECONNRESET: the client left.
                shutdown()
                return
            }
            outboxStart += sent
        }
        outbox.removeAll(keepingCapacity: outbox.count <= 1 << 16)
        outboxStart = 0
        _ = settleBudget(holding: heldBytes)
        markIdleIfAnswered()
        if awaitsRoom {
            awaitsRoom = false
            watch?.setInterest(interest)
        }
        closeOnceAnswered()
    }

    /// Drops the bytes already sent from the front of the outbox. A paced stream keeps the
    /// outbox from ever running empty, so without this it would grow by everything sent.
    private func compactOutbox() {
        guard outboxStart >= Self.lowWaterBytes, outboxStart >= outbox.count / 2 else { return }
        outbox.removeSubrange(0..<outboxStart)
        outboxStart = 0
    }

    private func awaitWritable() {
        guard !awaitsRoom else { return }
        awaitsRoom = true
        watch?.setInterest(interest)
    }

    private func shutdown() {
        guard !isClosed else { return }
        isClosed = true
        open.store(false, ordering: .relaxed)
        pending.removeAll()
        pendingBytes = 0
        if let bufferBudget, budgeted > 0 { _ = bufferBudget.change(peer.uid, by: -budgeted) }
        budgeted = 0
        outbox = []
        outboxStart = 0
        // Closed once the watch is gone: a descriptor number is reused at once.
        let fd = self.fd
        if let watch {
            watch.cancel { Glibc.close(fd) }
        } else {
            Glibc.close(fd)
        }
        watch = nil
        awaitsRoom = false
        onClose(self)
        offerRoom()
        let callbacks = closedCallbacks
        closedCallbacks = []
        for callback in callbacks { callback() }
    }
}
