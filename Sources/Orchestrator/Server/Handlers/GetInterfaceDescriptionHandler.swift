import OrchestratorAPI

/// `org.varlink.service.GetInterfaceDescription`: the committed `.varlink` file of an interface.
struct GetInterfaceDescriptionHandler: VarlinkMethodHandler {
    static let method = "org.varlink.service.GetInterfaceDescription"

    struct Parameters: Codable, Sendable {
        var interface: String
    }

    struct Reply: Codable, Sendable {
        var description: String
    }

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        responder.complete { () throws(VarlinkError) -> Reply in
            let parameters = try call.parameters(Parameters.self)
            guard let description = VarlinkService.interfaceDescriptions[parameters.interface] else {
                throw .interfaceNotFound(parameters.interface)
            }
            return Reply(description: description)
        }
    }
}
