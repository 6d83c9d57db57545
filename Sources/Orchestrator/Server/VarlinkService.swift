import OrchestratorAPI

/// Routes calls to the method handlers and answers the `org.varlink.service` interface.
///
/// Authorisation happens here, once for every method: only root and the daemon's own uid may
/// call; the socket's mode already keeps others out, this is the second wall.
final class VarlinkService: Sendable {
    /// The registration table: each handler under its method's qualified name.
    let handlers: [String: any VarlinkMethodHandler]
    private let daemonUID: UInt32

    /// The interfaces this service implements, with their descriptions in the Varlink
    /// interface definition syntax, as committed in `Server/Interfaces/*.varlink`.
    static let interfaceDescriptions: [String: String] = [
        ServiceInterface.name: String(decoding: PackageResources.org_varlink_service_varlink, as: UTF8.self),
        JobsInterface.name: String(decoding: PackageResources.io_orchd_Jobs_varlink, as: UTF8.self),
        ManagerInterface.name: String(decoding: PackageResources.io_orchd_Manager_varlink, as: UTF8.self),
        QueuesInterface.name: String(decoding: PackageResources.io_orchd_Queues_varlink, as: UTF8.self),
    ]

    /// Creates the service.
    /// - Parameters:
    ///   - handlers: one handler per method (``OrchdInterfaces/methods`` in orchd; a test
    ///     checks that list against the handlers); two for one method is a programming error.
    ///   - daemonUID: the daemon's effective uid, which may always call.
    init(handlers: [any VarlinkMethodHandler], daemonUID: UInt32) {
        var table: [String: any VarlinkMethodHandler] = [:]
        for handler in handlers {
            let method = type(of: handler).descriptor
            precondition(table[method.name] == nil, "two handlers for \(method.name)")
            table[method.name] = handler
        }
        self.handlers = table
        self.daemonUID = daemonUID
    }

    /// Handles one call: checks the caller, finds the handler, and lets it reply.
    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        guard call.peer.uid == 0 || call.peer.uid == daemonUID else {
            responder.fail(.permissionDenied())
            return
        }
        let interface = call.method.split(separator: ".").dropLast().joined(separator: ".")
        guard let handler = handlers[call.method] else {
            if Self.interfaceDescriptions[interface] == nil {
                responder.fail(.interfaceNotFound(interface))
            } else {
                responder.fail(.methodNotFound(call.method))
            }
            return
        }
        if type(of: handler).descriptor.requiresMore && !call.more && !call.oneway {
            responder.fail(.expectedMore())
            return
        }
        handler.handle(call, responder: responder)
    }
}
