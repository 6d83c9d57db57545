/// Splits a Varlink byte stream into messages: each message is a JSON object ended by one NUL
/// byte (https://varlink.org/Method-Call).
public struct VarlinkFrameDecoder: Sendable {
    /// Bytes of an unfinished message.
    private var pending: [UInt8] = []
    /// The largest message accepted, in bytes, NUL excluded.
    public let maximumMessageBytes: Int

    /// Creates a decoder.
    /// - Parameter maximumMessageBytes: messages longer than this are refused (default 1 MiB).
    public init(maximumMessageBytes: Int = 1 << 20) {
        self.maximumMessageBytes = maximumMessageBytes
    }

    /// Whether a message has begun but not ended.
    public var hasPartialMessage: Bool { !pending.isEmpty }

    /// Appends bytes read from the stream and returns the messages they complete, in order.
    /// - Throws: ``VarlinkFrameError/messageTooLarge(limitBytes:)`` once the unfinished message
    ///   grows past ``maximumMessageBytes``; the stream cannot be resynchronised after that.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(VarlinkFrameError) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        for byte in bytes {
            if byte == 0 {
                messages.append(pending)
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
                if pending.count > maximumMessageBytes {
                    throw .messageTooLarge(limitBytes: maximumMessageBytes)
                }
            }
        }
        return messages
    }
}
