import Foundation
import OrchestratorAPI

/// `io.orchd.Manager.Shutdown`: stops orchd exactly as SIGTERM does.
///
/// It raises SIGTERM at orchd itself rather than calling the stop path, so there is one stop
/// path: the signal handler's drain, teardown and flush. The reply is queued first, and the
/// connection stays open until the control socket stops, at the end of the stop, so the
/// caller gets it. Only admins (root, orchd's own uid, the admin group) reach this handler
/// (``AccessPolicy/adminMethods``).
struct ShutdownHandler: VarlinkMethodHandler {
    static let method = ManagerInterface.shutdown

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        DaemonLog.info("shutdown requested by pid \(call.peer.pid) (uid \(call.peer.uid))")
        responder.reply(VarlinkNoParameters())
        kill(getpid(), SIGTERM)
    }
}
