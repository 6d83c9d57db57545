import OrchestratorAPI

/// `org.varlink.service.GetInfo` (https://varlink.org/Service).
struct ServiceGetInfoHandler: VarlinkMethodHandler {
    static let method = "org.varlink.service.GetInfo"

    struct Reply: Codable, Sendable {
        var vendor: String
        var product: String
        var version: String
        var url: String
        var interfaces: [String]
    }

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        responder.reply(Reply(
            vendor: "orchd", product: "orchd", version: OrchdVersion.string, url: "",
            interfaces: VarlinkService.interfaceDescriptions.keys.sorted()))
    }
}
