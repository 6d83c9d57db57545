/// A method of a Varlink interface as a value: its qualified name, the types of its parameters
/// and of its reply, whether it must be called with `more`, and the errors of its own interface
/// it may answer with. orchctl calls through these (``VarlinkClient/call(_:_:)``) and orchd
/// registers its handlers by them, so a method name, its parameter type and its reply type
/// cannot drift apart between client and server; a test checks them against the committed
/// `.varlink` files.
///
/// Besides its listed errors, every method may answer with the protocol errors of
/// `org.varlink.service` (``VarlinkError/invalidParameter(_:)``, ...) and those of a
/// connection (``ManagerInterface/Errors``).
public struct VarlinkMethod<Parameters: Codable & Sendable, Reply: Codable & Sendable>: Sendable {
    /// The qualified method name, e.g. `io.orchd.Jobs.Submit`.
    public let name: String
    /// Whether the method only makes sense with `more` (`org.varlink.service.ExpectedMore`
    /// otherwise).
    public let requiresMore: Bool
    /// The qualified names of the errors it may reply with, beyond the protocol's.
    public let errors: [String]
    /// Writes a call's parameters without `JSONEncoder`, for the calls a short-lived client
    /// makes every day (whose first `JSONEncoder` use instantiates the coder's generic
    /// machinery: most of a one-call command's work past start-up); `nil`: `JSONEncoder`
    /// writes them. Held here, not found by a dynamic cast, which itself scans the binary's
    /// conformance records.
    public let writeParameters: (@Sendable (Parameters, inout JSONByteWriter) -> Void)?
    /// Reads a reply's parameters without `JSONDecoder`; `nil` from it (or no reader) leaves
    /// the reply to `JSONDecoder`, errors included.
    public let readReply: (@Sendable (inout JSONByteReader) -> Reply?)?

    /// Declares a method.
    /// - Parameters:
    ///   - name: the qualified name.
    ///   - requiresMore: whether a call must carry `more`.
    ///   - errors: the qualified error names it may reply with.
    ///   - writeParameters: writes the parameters as their `Encodable` conformance would.
    ///   - readReply: reads the reply as its `Decodable` conformance would, or gives up.
    public init(
        _ name: String, requiresMore: Bool = false, errors: [String] = [],
        writeParameters: (@Sendable (Parameters, inout JSONByteWriter) -> Void)? = nil,
        readReply: (@Sendable (inout JSONByteReader) -> Reply?)? = nil
    ) {
        self.name = name
        self.requiresMore = requiresMore
        self.errors = errors
        self.writeParameters = writeParameters
        self.readReply = readReply
    }

    /// The same method with its reply decoded as `Narrower`: a type with only the fields a
    /// caller reads. Fields it leaves out are skipped, not converted (a CLI call that needs
    /// only a job's ID spent a tenth of its time decoding the whole job).
    /// - Parameters:
    ///   - narrower: the reply type; its fields must have the reply's names and types.
    ///   - reader: reads it without `JSONDecoder`, or gives up.
    /// - Returns: the method under the same name, errors, `more` rule and parameter writer.
    public func decodingReply<Narrower: Codable & Sendable>(
        as narrower: Narrower.Type, reading reader: (@Sendable (inout JSONByteReader) -> Narrower?)? = nil
    ) -> VarlinkMethod<Parameters, Narrower> {
        VarlinkMethod<Parameters, Narrower>(
            name, requiresMore: requiresMore, errors: errors, writeParameters: writeParameters, readReply: reader)
    }

    /// The method without its types, for tables of methods of different types.
    public var erased: AnyVarlinkMethod {
        AnyVarlinkMethod(
            name: name, requiresMore: requiresMore, errors: errors,
            parametersType: String(describing: Parameters.self), replyType: String(describing: Reply.self))
    }
}

/// A ``VarlinkMethod`` without its type parameters: what a table of every method holds.
public struct AnyVarlinkMethod: Hashable, Sendable {
    /// The qualified method name.
    public let name: String
    /// Whether a call must carry `more`.
    public let requiresMore: Bool
    /// The qualified error names it may reply with, beyond the protocol's.
    public let errors: [String]
    /// The Swift type of its parameters, for messages and tests.
    public let parametersType: String
    /// The Swift type of its reply, for messages and tests.
    public let replyType: String

    /// The interface the method belongs to: its name up to the last dot.
    public var interface: String {
        guard let dot = name.lastIndex(of: ".") else { return name }
        return String(name[..<dot])
    }
}

/// Every method orchd serves, by interface; the one list the server's registration is checked
/// against.
public enum OrchdInterfaces {
    /// Every method of every interface orchd implements.
    public static let methods: [AnyVarlinkMethod] =
        ServiceInterface.methods + JobsInterface.methods + QueuesInterface.methods + ManagerInterface.methods
}
