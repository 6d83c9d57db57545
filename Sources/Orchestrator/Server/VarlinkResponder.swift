import Foundation
import OrchestratorAPI

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
            do {
                return try Self.encoder().encode(VarlinkReply(parameters: parameters, continues: continues ? true : nil))
            } catch {
                return Self.errorData(VarlinkError(
                    "io.orchd.Manager.InternalError", ["message": .string("cannot encode the reply: \(error)")]))
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
            ?? Data(#"{"error":"io.orchd.Manager.InternalError"}"#.utf8)
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
