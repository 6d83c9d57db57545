import Foundation
import OrchestratorAPI
import Synchronization

/// Sends the replies of one method call. Any queue may call it; the connection serialises the
/// writes. A call gets exactly one final reply (``reply(_:)`` or ``fail(_:)``), preceded by any
/// number of ``reply(_:continues:)`` with `continues: true` when it was made with `more`.
public struct VarlinkResponder: Sendable {
    /// Hands a reply to the connection: `encode` runs on the connection's queue (never on
    /// the control queue, where large replies would stall the scheduler).
    let send: @Sendable (_ encode: @escaping @Sendable () -> Data, _ isFinal: Bool) -> Void
    /// Whether the client is still connected (a stream stops for a client that left).
    let isConnected: @Sendable () -> Bool
    /// Whether the client has fallen far behind reading its replies; an endless stream
    /// should drop such a client, which can resume where it stopped.
    let isBackedUp: @Sendable () -> Bool
    /// Runs a closure on the connection's queue once the client has read enough of the replies
    /// sent so far (its outbox is below the low-water mark), or at once when it has gone.
    let schedule: @Sendable (_ body: @escaping @Sendable () -> Void) -> Void
    /// Creates a responder over a connection's hooks (see the properties).
    init(
        send: @escaping @Sendable (_ encode: @escaping @Sendable () -> Data, _ isFinal: Bool) -> Void,
        isConnected: @escaping @Sendable () -> Bool, isBackedUp: @escaping @Sendable () -> Bool,
        whenReady: @escaping @Sendable (_ body: @escaping @Sendable () -> Void) -> Void,
        more: Bool, oneway: Bool
    ) {
        self.send = send
        self.isConnected = isConnected
        self.isBackedUp = isBackedUp
        self.schedule = whenReady
        self.more = more
        self.oneway = oneway
    }

    /// The same responder, but its first final reply also tells `unanswered` that the call
    /// was answered (``UnansweredRequests/begin()`` is called here).
    /// - Returns: `nil` when `unanswered` takes no more calls (orchd is closing its connections).
    func counted(in unanswered: UnansweredRequests) -> VarlinkResponder? {
        guard unanswered.begin() else { return nil }
        let latch = FinalReplyLatch()
        let send = self.send
        return VarlinkResponder(
            send: { encode, isFinal in
                send(encode, isFinal)
                if isFinal, !latch.sent.exchange(true, ordering: .relaxed) { unanswered.answered() }
            },
            isConnected: isConnected, isBackedUp: isBackedUp, whenReady: schedule, more: more, oneway: oneway)
    }

    /// Whether a counted call's final reply went out (a handler sends one; this keeps a second
    /// from counting twice).
    private final class FinalReplyLatch: Sendable {
        let sent = Atomic<Bool>(false)
    }

    /// Calls `body` once the client has room for more replies: when the replies sent before
    /// this call have mostly been read (the connection's outbox is below its low-water mark),
    /// at once if they have; and at once when the client has gone, so a producer can check
    /// ``isConnected`` and release what it holds. This is how a stream is paced by its reader
    /// (``ReplyPacer``): produce the next replies in `body`, then ask again.
    /// - Parameter body: runs on the connection's queue; it should be quick (hop to another
    ///   queue for file or database work).
    public func whenReady(_ body: @escaping @Sendable () -> Void) {
        schedule(body)
    }

    /// Whether the caller asked for several replies.
    public let more: Bool
    /// Whether the caller asked for no reply at all.
    public let oneway: Bool

    /// Sends a reply with `parameters`.
    /// - Parameter continues: more replies follow (only valid when the call had `more`).
    public func reply<P: Codable & Sendable>(_ parameters: P, continues: Bool = false) {
        let continues = continues && more
        if oneway {
            if !continues { send({ Data() }, true) }
            return
        }
        send({
            if let message = DirectReplyEncoder.message(parameters, continues: continues) { return message }
            do {
                return try Self.encoder().encode(VarlinkReply(parameters: parameters, continues: continues ? true : nil))
            } catch {
                return Self.errorData(VarlinkError(
                    ManagerInterface.Errors.internalError, ["message": .string("cannot encode the reply: \(error)")]))
            }
        }, !continues)
    }

    /// Sends an error reply; it ends the call.
    public func fail(_ error: VarlinkError) {
        if oneway {
            send({ Data() }, true)
            return
        }
        send({ Self.errorData(error) }, true)
    }

    private static func errorData(_ error: VarlinkError) -> Data {
        (try? encoder().encode(VarlinkReply(parameters: error.parameters, error: error.name)))
            ?? Data("{\"error\":\"\(ManagerInterface.Errors.internalError)\"}".utf8)
    }

    /// Ends a call whose client has gone (``isConnected`` is `false`) without a final reply:
    /// nothing reaches the client, and a counted call counts as answered, so that a stop does
    /// not wait for a stream nobody reads.
    public func abandon() {
        send({ Data() }, true)
    }

    /// Sends the result of `body`: its value as the reply, a thrown ``VarlinkError`` as an
    /// error reply.
    public func complete<P: Codable & Sendable>(_ body: () throws(VarlinkError) -> P) {
        do {
            reply(try body())
        } catch {
            fail(error)
        }
    }

    /// A fresh encoder per reply: encoding runs on many connection queues at once.
    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
