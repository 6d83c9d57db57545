import FoundationEssentials

/// A Varlink method call: `{"method": "io.orchd.Jobs.Get", "parameters": {...}, "more": true}`
/// followed on the wire by one NUL byte (https://varlink.org/Method-Call).
public struct VarlinkCall<Parameters: Codable & Sendable>: Codable, Sendable {
    /// The qualified method name, `interface.Method`.
    public var method: String
    public var parameters: Parameters?
    /// The caller accepts several replies; all but the last carry `continues: true`.
    public var more: Bool?
    /// The caller wants no reply.
    public var oneway: Bool?

    /// Creates a value with every field given.
    public init(method: String, parameters: Parameters?, more: Bool? = nil, oneway: Bool? = nil) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
    }
}

extension VarlinkCall {
    /// The call as a message's JSON text (without the terminating NUL): its parameters
    /// written by `writeParameters` when given, else everything by `encoder` (only then made).
    /// - Throws: what `encoder` throws.
    func encoded(
        with encoder: @autoclosure () -> JSONEncoder, writingParameters writeParameters: ((Parameters, inout JSONByteWriter) -> Void)?
    ) throws -> [UInt8] {
        guard let writeParameters, let parameters else { return Array(try encoder().encode(self)) }
        var writer = JSONByteWriter(capacity: 1024)
        writer.raw(#"{"method":"#)
        writer.string(method)
        writer.raw(#","parameters":"#)
        writeParameters(parameters, &writer)
        if let more { writer.raw(#","more":"#); writer.bool(more) }
        if let oneway { writer.raw(#","oneway":"#); writer.bool(oneway) }
        writer.raw("}")
        return writer.bytes
    }
}

/// The part of a call the server reads before it knows the parameters' type.
public struct VarlinkCallHeader: Codable, Sendable {
    public var method: String
    public var more: Bool?
    public var oneway: Bool?
}

/// A Varlink reply: parameters, or an error name with parameters; `continues` marks a reply
/// to a `more` call that is not the last.
public struct VarlinkReply<Parameters: Codable & Sendable>: Codable, Sendable {
    public var parameters: Parameters?
    public var continues: Bool?
    public var error: String?

    /// Creates a value with every field given.
    public init(parameters: Parameters?, continues: Bool? = nil, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }
}

/// Empty parameters, `{}`.
public struct VarlinkNoParameters: Codable, Sendable, Hashable {
    /// Creates a value with every field given.
    public init() {}
}
