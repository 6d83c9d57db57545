import OrchestratorAPI

/// `io.orchd.Manager.Ping`: answers at once, without touching the control queue's state.
struct PingHandler: VarlinkMethodHandler {
    static let method = ManagerInterface.ping

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        responder.reply(VarlinkNoParameters())
    }
}
