import OrchestratorAPI

/// `io.orchd.Manager.Reload`: re-reads the configuration file, as SIGHUP does.
struct ReloadHandler: VarlinkMethodHandler {
    static let method = ManagerInterface.reload
    /// Runs the daemon's reload and says how it went.
    let reload: @Sendable () -> ManagerInterface.ReloadReply

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        responder.reply(reload())
    }
}
