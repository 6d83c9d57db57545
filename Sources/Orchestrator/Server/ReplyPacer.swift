import Synchronization

/// Drives a streamed reply at the pace of its reader: asks the producer for its next replies
/// only when the client's connection has room for them (``VarlinkResponder/whenReady(_:)``),
/// so a stream of any length holds a bounded amount of daemon memory, and a client that reads
/// as fast as it can is never cut for falling behind.
///
/// The producer is a `step`: it sends one bounded batch of replies (a log chunk, a page of
/// jobs or events) and says what it did. Steps never overlap; the next one starts after the
/// previous one called `done` and the client has room again.
///
/// ```swift
/// let pacer = ReplyPacer(responder: responder, step: { done in
///     queue.async { done(sendNextChunk()) }
/// }, disconnected: { queue.async { closeFile() } })
/// pacer.start()
/// ```
final class ReplyPacer: Sendable {
    /// What one step did.
    enum Step: Sendable {
        /// Sent replies and has more now: step again once the client has room.
        case more
        /// Sent what there is for now (maybe nothing); step again after ``wake()``.
        case idle
        /// Sent the final reply: the stream is over.
        case finished
    }

    private enum Phase {
        /// Waiting for ``wake()``.
        case idle
        /// A step is due once the client has room.
        case awaitingRoom
        /// A step runs; `woken` when ``wake()`` came meanwhile.
        case stepping(woken: Bool)
        /// Ended: finished, or the client left.
        case over
    }

    private let responder: VarlinkResponder
    private let step: @Sendable (_ done: @escaping @Sendable (Step) -> Void) -> Void
    private let disconnected: @Sendable () -> Void
    private let phase = Mutex(Phase.idle)

    /// Creates a pacer; nothing happens before ``start()``.
    /// - Parameters:
    ///   - responder: the call's replies; its client's room paces the steps.
    ///   - step: sends the next batch of replies and then calls `done` once, from any queue.
    ///     It runs on the connection's queue, so file or database work should hop elsewhere.
    ///   - disconnected: called once, instead of the next step, when the client has gone: the
    ///     producer releases what it holds (files, watches). No reply is needed any more; the
    ///     call is ended without one (``VarlinkResponder/abandon()``).
    init(
        responder: VarlinkResponder,
        step: @escaping @Sendable (_ done: @escaping @Sendable (Step) -> Void) -> Void,
        disconnected: @escaping @Sendable () -> Void = {}
    ) {
        self.responder = responder
        self.step = step
        self.disconnected = disconnected
    }

    /// Starts the stream: the first step runs as soon as the client has room.
    func start() {
        wake()
    }

    /// Tells an idle stream that there is more to send (e.g. a followed log grew): it steps
    /// again once the client has room. Any queue may call it, any number of times.
    func wake() {
        let due = phase.withLock { phase -> Bool in
            switch phase {
            case .idle:
                phase = .awaitingRoom
                return true
            case .stepping:
                phase = .stepping(woken: true)
                return false
            case .awaitingRoom, .over:
                return false
            }
        }
        if due { awaitRoom() }
    }

    private func awaitRoom() {
        responder.whenReady { [self] in
            guard responder.isConnected() else {
                let wasOver = phase.withLock { phase -> Bool in
                    defer { phase = .over }
                    if case .over = phase { return true }
                    return false
                }
                if !wasOver {
                    responder.abandon()
                    disconnected()
                }
                return
            }
            phase.withLock { $0 = .stepping(woken: false) }
            step { result in self.stepped(result) }
        }
    }

    private func stepped(_ result: Step) {
        let due = phase.withLock { phase -> Bool in
            switch (result, phase) {
            case (.finished, _):
                phase = .over
                return false
            case (.more, _), (.idle, .stepping(woken: true)):
                phase = .awaitingRoom
                return true
            case (.idle, _):
                phase = .idle
                return false
            }
        }
        if due { awaitRoom() }
    }
}
