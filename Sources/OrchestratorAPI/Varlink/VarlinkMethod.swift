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

    /// Declares a method.
    /// - Parameters:
    ///   - name: the qualified name.
    ///   - requiresMore: whether a call must carry `more`.
    ///   - errors: the qualified error names it may reply with.
    public init(_ name: String, requiresMore: Bool = false, errors: [String] = []) {
        self.name = name
        self.requiresMore = requiresMore
        self.errors = errors
    }

    /// The same method with its reply decoded as `Narrower`: a type with only the fields a
    /// caller reads. Fields it leaves out are skipped, not converted (a CLI call that needs
    /// only a job's ID spent a tenth of its time decoding the whole job).
    /// - Parameter narrower: the reply type; its fields must have the reply's names and types.
    /// - Returns: the method under the same name, errors and `more` rule.
    public func decodingReply<Narrower: Codable & Sendable>(as narrower: Narrower.Type) -> VarlinkMethod<Parameters, Narrower> {
        VarlinkMethod<Parameters, Narrower>(name, requiresMore: requiresMore, errors: errors)
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
