import Foundation
import OrchestratorAPI

/// One method call received on a connection, with the caller's credentials.
public struct VarlinkMethodCall: Sendable {
    /// The qualified method name, e.g. `io.orchd.Jobs.Submit`.
    public var method: String
    /// The caller accepts several replies (`more`).
    public var more: Bool
    /// The caller wants no reply (`oneway`).
    public var oneway: Bool
    /// The whole message, for decoding the parameters once the method is known.
    public var message: Data
    /// The calling process, from `SO_PEERCRED`.
    public var peer: PeerCredentials
    /// Who the caller is to orchd (their uid, and whether they are an admin), set by
    /// ``VarlinkService`` from ``peer`` before any handler sees the call.
    public var caller: Caller = .nobody

    /// Decodes the call's parameters; a call without `parameters` decodes as `{}`.
    /// - Throws: `org.varlink.service.InvalidParameter` naming the first offending field (or
    ///   `parameters` when the object itself is wrong): among them the first member name given
    ///   twice in one object (`spec.environment.A`), and where the message stops being strict
    ///   JSON (``JSONByteReader/strictScan(of:)``), both of which `JSONDecoder` would read,
    ///   dropping a value or guessing; or the object with a name that is not stream-safe
    ///   (over 30 combining marks in a row: normalising it to hash it takes quadratic time);
    ///   or an integer field holding a number its type does not hold, or not written as an
    ///   integer (``IntegerFieldCheck``: `JSONDecoder` names no field for the one and takes
    ///   some of the other).
    public func parameters<P: Codable & Sendable>(_ type: P.Type) throws(VarlinkError) -> P {
        var numbers: [JSONByteReader.UnusualNumber] = []
        switch JSONByteReader.strictScan(of: message, unusualNumbers: &numbers) {
        case .clean: break
        case .repeatedName(let path), .notStrict(let path), .unsafeName(let path): throw .invalidParameter(Self.parameterName(of: path))
        }
        let parameters: P
        do {
            let call = try JSONDecoder().decode(VarlinkCall<P>.self, from: message)
            parameters = try call.parameters ?? JSONDecoder().decode(P.self, from: Data("{}".utf8))
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               let path = IntegerFieldCheck.fieldRefusingNumber(P.self, in: message, numbers: numbers) {
                throw .invalidParameter(Self.parameterName(of: path))
            }
            throw .invalidParameter(Self.parameterName(of: error))
        } catch {
            throw .invalidParameter("parameters")
        }
        if let path = IntegerFieldCheck.fieldNotWrittenAsInteger(P.self, in: message, numbers: numbers) {
            throw .invalidParameter(Self.parameterName(of: path))
        }
        return parameters
    }

    /// The field a decoding error is about, e.g. `spec.cwd`.
    private static func parameterName(of error: DecodingError) -> String {
        let path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
        @unknown default: path = []
        }
        return parameterName(of: path.map { $0.intValue.map(String.init) ?? $0.stringValue })
    }

    /// A field's dotted name (`spec.cwd`), from its path in the message.
    private static func parameterName(of path: [String]) -> String {
        let names = path.first == "parameters" ? Array(path.dropFirst()) : path
        return names.isEmpty ? "parameters" : names.joined(separator: ".")
    }
}
