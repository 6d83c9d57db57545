/// An error reply of the Varlink protocol: a fully qualified error name and its parameters,
/// e.g. `io.orchd.Jobs.NoSuchJob` with `{"id": 7}` (https://varlink.org/Method-Call).
///
/// Only the daemon's Varlink handlers create these from engine errors; only `orchctl` turns
/// them into exit codes.
public struct VarlinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error's qualified name, `interface.ErrorName`.
    public var name: String
    /// The error's parameters.
    public var parameters: [String: JSONValue]

    /// Creates an error reply.
    public init(_ name: String, _ parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// A human-readable message: the `message` parameter when there is one, else the name and
    /// parameters.
    public var description: String {
        if case .string(let message)? = parameters["message"] { return message }
        if parameters.isEmpty { return name }
        return name + " " + JSONValue.object(parameters).description
    }

    // MARK: - Errors defined by org.varlink.service (https://varlink.org/Service)

    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(ServiceInterface.Errors.interfaceNotFound, ["interface": .string(interface)])
    }

    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(ServiceInterface.Errors.methodNotFound, ["method": .string(method)])
    }

    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(ServiceInterface.Errors.invalidParameter, ["parameter": .string(parameter)])
    }

    public static func permissionDenied() -> VarlinkError {
        VarlinkError(ServiceInterface.Errors.permissionDenied)
    }

    /// `PermissionDenied` with a `message` saying what is missing (an extra parameter, which
    /// Varlink clients that do not know it ignore).
    public static func permissionDenied(_ message: String) -> VarlinkError {
        VarlinkError(ServiceInterface.Errors.permissionDenied, ["message": .string(message)])
    }

    public static func expectedMore() -> VarlinkError {
        VarlinkError(ServiceInterface.Errors.expectedMore)
    }
}
