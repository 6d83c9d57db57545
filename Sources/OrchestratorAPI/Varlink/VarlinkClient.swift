import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A blocking Varlink client on a Unix stream socket, one call at a time.
///
/// ```swift
/// let client = try VarlinkClient(socketPath: "/run/orchd/orchd.sock")
/// let reply = try client.call(JobsInterface.get, JobsInterface.GetParameters(id: id))
/// print(reply.job.state)
/// ```
public final class VarlinkClient {
    private let fd: Int32
    private var decoder = VarlinkFrameDecoder(maximumMessageBytes: 64 << 20)
    private var received: [[UInt8]] = []
    // Made at their first use: a call with a hand-written writer and reply reader (a submit)
    // needs neither, and making both cost 33,000 instructions, 2% of a CLI submit.
    private lazy var jsonEncoder = JSONEncoder()
    private lazy var jsonDecoder = JSONDecoder()

    /// Connects to the socket at `socketPath`.
    /// - Throws: ``VarlinkClientError/connectFailed(path:errno:)`` when the socket does not
    ///   exist, refuses the connection (no daemon) or may not be opened (`EACCES`), and
    ///   ``VarlinkClientError/pathTooLong(_:)`` when the path does not fit `sun_path` (108 bytes).
    public init(socketPath: String) throws(VarlinkClientError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(socketPath.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { throw .pathTooLong(socketPath) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .connectFailed(path: socketPath, errno: errno) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw .connectFailed(path: socketPath, errno: code)
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Calls `method` and returns its single reply.
    /// - Parameters:
    ///   - method: the method, e.g. ``ManagerInterface/ping``; it fixes the types of the
    ///     parameters and of the reply.
    ///   - parameters: the call's parameters.
    /// - Throws: ``VarlinkClientError/remote(_:)`` for an error reply (one of the method's
    ///   ``VarlinkMethod/errors`` or a protocol error), other cases when the connection fails
    ///   or the reply is not valid Varlink.
    public func call<P, R>(_ method: VarlinkMethod<P, R>, _ parameters: P) throws(VarlinkClientError) -> R {
        try transmit(VarlinkCall(method: method.name, parameters: parameters), of: method)
        let reply: (parameters: R, continues: Bool) = try receiveFirst(reading: method.readReply)
        return reply.parameters
    }

    /// Calls `method` with `more: true` and hands each reply to `body` until the last one
    /// (the one without `continues`), or until `body` returns `false`.
    /// - Throws: as ``call(_:_:)``, and whatever `body` throws.
    public func stream<P, R>(_ method: VarlinkMethod<P, R>, _ parameters: P, _ body: (R) throws -> Bool) throws -> Void {
        try transmit(VarlinkCall(method: method.name, parameters: parameters, more: true), of: method)
        var reply: (parameters: R, continues: Bool) = try receiveFirst(reading: method.readReply)
        while try body(reply.parameters), reply.continues {
            reply = try receive(reading: method.readReply)
        }
    }

    /// The connected socket's descriptor, for the caller's own `getsockopt(2)` (the peer's
    /// credentials); the client keeps it and closes it.
    public var socketDescriptor: Int32 { fd }

    /// Blocks until the server closes the connection, discarding anything it sends; for a
    /// client that asked the server to stop and waits for it to let go.
    /// - Throws: ``VarlinkClientError/connectionLost(errno:)`` when reading fails other than
    ///   by the end of the stream.
    public func waitForClose() throws(VarlinkClientError) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return }
                throw .connectionLost(errno: errno)
            }
        }
    }

    // MARK: - Wire

    /// Writes `call`; when the server closes the connection while it is still being written
    /// (it refuses a call over its message cap, say, and closes), reads the error reply the
    /// server sent before closing, so the caller learns why instead of a bare broken pipe.
    private func transmit<P: Codable & Sendable, R: Codable & Sendable>(
        _ call: VarlinkCall<P>, of method: VarlinkMethod<P, R>
    ) throws(VarlinkClientError) {
        do {
            try write(call, writingParameters: method.writeParameters)
        } catch {
            guard case .connectionLost(let code) = error, code == EPIPE || code == ECONNRESET else { throw error }
            do {
                let _: (parameters: R, continues: Bool) = try receive(reading: nil)
            } catch let reply {
                if case .remote = reply { throw reply }
            }
            throw .callNotDelivered(errno: code)
        }
    }

    private func write<P: Codable & Sendable>(
        _ call: VarlinkCall<P>, writingParameters: ((P, inout JSONByteWriter) -> Void)?
    ) throws(VarlinkClientError) {
        var bytes: [UInt8]
        do {
            bytes = try call.encoded(with: jsonEncoder, writingParameters: writingParameters)
        } catch {
            throw .protocolViolation("cannot encode the call: \(error)")
        }
        bytes.append(0)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .connectionLost(errno: errno)
            }
            sent += n
        }
    }

    /// Reads the first reply to the call just sent, as ``receive(reading:)`` does. A reset
    /// connection before it means the call was never received: a Unix stream socket closed
    /// with bytes it had not read resets its peer (unix(7); Linux's `unix_release_sock`), and
    /// this client sends nothing after a call until its reply, so the unread bytes were the
    /// call's, and orchd acts on a call only once all of it has arrived.
    private func receiveFirst<R: Codable & Sendable>(
        reading reader: ((inout JSONByteReader) -> R?)?
    ) throws(VarlinkClientError) -> (parameters: R, continues: Bool) {
        do {
            return try receive(reading: reader)
        } catch .connectionLost(let code) where code == ECONNRESET {
            throw .callNotDelivered(errno: code)
        }
    }

    /// Reads the next reply: its parameters and whether more replies follow; through `reader`
    /// when it is given and takes the reply, else through `JSONDecoder` (every error reply).
    private func receive<R: Codable & Sendable>(
        reading reader: ((inout JSONByteReader) -> R?)?
    ) throws(VarlinkClientError) -> (parameters: R, continues: Bool) {
        while received.isEmpty {
            // Not zeroed first: clearing 64 KiB (and faulting in its pages) cost more than
            // reading a typical reply.
            var n = 0
            let buffer = [UInt8](unsafeUninitializedCapacity: 65536) { bytes, initialized in
                n = read(fd, bytes.baseAddress, bytes.count)
                initialized = max(n, 0)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .connectionLost(errno: errno)
            }
            if n == 0 { throw .connectionLost(errno: 0) }
            do {
                received += try decoder.append(buffer[..<n])
            } catch {
                throw .protocolViolation("a reply exceeded \(decoder.maximumMessageBytes) bytes")
            }
        }
        let frame = received.removeFirst()
        if let reader, let reply = Self.readReply(frame, with: reader) { return reply }
        if let error = Self.readError(frame) { throw .remote(error) }
        let message = Data(frame)
        // The envelope alone first (an empty parameters type skips the job objects), and the
        // parameters as a JSON tree only for an error: building that tree for every reply was
        // most of a submit's decoding.
        let envelope: VarlinkReply<VarlinkNoParameters>
        do {
            envelope = try jsonDecoder.decode(VarlinkReply<VarlinkNoParameters>.self, from: message)
        } catch {
            throw .protocolViolation("a reply that is not a JSON object")
        }
        if let name = envelope.error {
            let parameters = try? jsonDecoder.decode(VarlinkReply<[String: JSONValue]>.self, from: message).parameters
            throw .remote(VarlinkError(name, (parameters ?? nil) ?? [:]))
        }
        do {
            let reply = try jsonDecoder.decode(VarlinkReply<R>.self, from: message)
            guard let parameters = reply.parameters else { throw VarlinkClientError.protocolViolation("a reply without parameters") }
            return (parameters, reply.continues == true)
        } catch {
            throw .protocolViolation("unexpected reply: \(error)")
        }
    }

    /// An error reply, `{"error": "name", "parameters": {...}}`, read as `JSONDecoder` reads it
    /// below (parameters `null` or left out: none), or `nil` for `JSONDecoder` to judge: a
    /// one-call command that met an error (no such job, permission denied) decoded the
    /// envelope and the parameters with `JSONDecoder`, whose first use was most of its work.
    static func readError(_ frame: [UInt8]) -> VarlinkError? {
        frame.withUnsafeBufferPointer { bytes -> VarlinkError? in
            var json = JSONByteReader(bytes: bytes)
            var name: String?
            var parameters: [String: JSONValue]?
            let ok = json.object { key, json in
                switch key {
                case "error": return json.required(&name) { $0.string() }
                case "parameters": return json.nullable(&parameters) { $0.jsonObject() }
                case "continues": return json.null() || json.bool() != nil
                default: return json.skipValue()
                }
            }
            guard ok, json.atEnd(), let name else { return nil }
            return VarlinkError(name, parameters ?? [:])
        }
    }

    /// A reply read by `reader`: `{"parameters": {...}, "continues": ...}` with no `error`
    /// and no key twice, or `nil` for `JSONDecoder` to judge.
    private static func readReply<R>(_ frame: [UInt8], with reader: (inout JSONByteReader) -> R?) -> (parameters: R, continues: Bool)? {
        frame.withUnsafeBufferPointer { bytes -> (parameters: R, continues: Bool)? in
            var json = JSONByteReader(bytes: bytes)
            var parameters: R?
            var continues: Bool?
            let ok = json.object { key, json in
                switch key {
                case "parameters":
                    parameters = reader(&json)
                    return parameters != nil
                case "continues": return json.null() || { continues = json.bool(); return continues != nil }()
                case "error": return false
                default: return json.skipValue()
                }
            }
            guard ok, json.atEnd(), let parameters else { return nil }
            return (parameters, continues == true)
        }
    }
}
