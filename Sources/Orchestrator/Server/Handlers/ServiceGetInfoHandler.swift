import OrchestratorAPI

/// `org.varlink.service.GetInfo` (https://varlink.org/Service).
struct ServiceGetInfoHandler: VarlinkMethodHandler {
    static let method = ServiceInterface.getInfo

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        responder.reply(ServiceInterface.InfoReply(
            vendor: "orchd", product: "orchd", version: OrchdVersion.string, url: "",
            interfaces: VarlinkService.interfaceDescriptions.keys.sorted()))
    }
}
