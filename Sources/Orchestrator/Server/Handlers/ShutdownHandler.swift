import OrchestratorAPI

/// `io.orchd.Manager.Shutdown`: stops orchd exactly as SIGTERM does.
///
/// It begins the signal handlers' stop (``SignalHandlers/requestStop``), so there is one stop
/// path: the drain, teardown and flush. It does not raise SIGTERM at orchd: the log would then
/// say a signal came that nobody sent. The reply is queued first, and the connection stays
/// open until the control socket stops, at the end of the stop, so the caller gets it. Only
/// admins (root, orchd's own uid, the admin group) reach this handler
/// (``AccessPolicy/adminMethods``).
struct ShutdownHandler: VarlinkMethodHandler {
    static let method = ManagerInterface.shutdown
    /// Begins the stop; the reason is logged.
    let requestStop: @Sendable (_ reason: String) -> Void

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        responder.reply(VarlinkNoParameters())
        requestStop("shutdown requested by pid \(call.peer.pid) (uid \(call.peer.uid))")
    }
}
