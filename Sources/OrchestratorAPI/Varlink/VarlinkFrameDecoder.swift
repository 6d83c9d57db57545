#if canImport(Glibc)
import Glibc
#endif

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

    /// A framing failure: the peer sent something that cannot be a Varlink message.
    public enum FrameError: Error, Hashable, Sendable {
        /// A message exceeded the size cap (in bytes).
        case messageTooLarge(limitBytes: Int)
    }

    /// Whether a message has begun but not ended.
    public var hasPartialMessage: Bool { !pending.isEmpty }

    /// The bytes of the message begun but not ended.
    public var partialMessageBytes: Int { pending.count }

    /// Appends bytes read from the stream and returns the messages they complete, in order.
    /// - Throws: ``FrameError/messageTooLarge(limitBytes:)`` once the unfinished message
    ///   grows past ``maximumMessageBytes``; the stream cannot be resynchronised after that.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(FrameError) -> [[UInt8]] {
        // Found with memchr(3) in contiguous memory: a generic byte-by-byte search dominated
        // the cost of a long stream (a 100 MB log is 133 MB of replies).
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(FrameError) -> [[UInt8]] in try append(contiguous: buffer) }
        }
        if let result { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(FrameError) -> [[UInt8]] in try append(contiguous: buffer) }
        }.get()
    }

    private mutating func append(contiguous buffer: UnsafeBufferPointer<UInt8>) throws(FrameError) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        guard let base = buffer.baseAddress else { return messages }
        var start = 0
        // Whole runs up to each NUL are copied at once: byte-by-byte appends dominated the cost
        // of large calls (a 2,000-job SubmitBatch is megabytes).
        while start < buffer.count, let found = memchr(base + start, 0, buffer.count - start) {
            let end = start + (UnsafeRawPointer(found) - UnsafeRawPointer(base + start))
            let run = UnsafeBufferPointer(rebasing: buffer[start..<end])
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
            start = end + 1
        }
        let rest = UnsafeBufferPointer(rebasing: buffer[start...])
        if pending.count + rest.count > maximumMessageBytes {
            throw .messageTooLarge(limitBytes: maximumMessageBytes)
        }
        pending.append(contentsOf: rest)
        return messages
    }
}
