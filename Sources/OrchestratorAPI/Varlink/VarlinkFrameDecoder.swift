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
        var rest = bytes[...]
        // Whole runs up to each NUL are copied at once: byte-by-byte appends dominated the cost
        // of large calls (a 2,000-job SubmitBatch is megabytes).
        while let end = rest.firstIndex(of: 0) {
            let run = rest[..<end]
            if pending.count + run.count > maximumMessageBytes {
                throw .messageTooLarge(limitBytes: maximumMessageBytes)
            }
            if pending.isEmpty {
                messages.append(Array(run))
            } else {
                pending.append(contentsOf: run)
                messages.append(pending)
                pending.removeAll(keepingCapacity: true)
            }
            rest = rest[rest.index(after: end)...]
        }
        if pending.count + rest.count > maximumMessageBytes {
            throw .messageTooLarge(limitBytes: maximumMessageBytes)
        }
        pending.append(contentsOf: rest)
        return messages
    }
}
