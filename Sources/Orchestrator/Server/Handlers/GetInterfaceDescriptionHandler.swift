import OrchestratorAPI

/// `org.varlink.service.GetInterfaceDescription`: the committed `.varlink` file of an interface.
struct GetInterfaceDescriptionHandler: VarlinkMethodHandler {
    static let method = ServiceInterface.getInterfaceDescription


    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        responder.complete { () throws(VarlinkError) -> ServiceInterface.InterfaceDescriptionReply in
            let parameters = try call.parameters(ServiceInterface.InterfaceDescriptionParameters.self)
            guard let description = VarlinkService.interfaceDescriptions[parameters.interface] else {
                throw .interfaceNotFound(parameters.interface)
            }
            return ServiceInterface.InterfaceDescriptionReply(description: description)
        }
    }
}
