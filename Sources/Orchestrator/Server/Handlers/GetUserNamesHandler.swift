import Dispatch
import OrchestratorAPI

/// `io.orchd.Manager.GetUserNames`: the login names of user IDs, for orchctl's OWNER and USER
/// columns. orchctl is a static executable and must not load NSS modules itself (a static glibc
/// that loads one for a uid /etc/passwd lacks crashes), so it asks orchd, which links glibc
/// dynamically.
///
/// A lookup can be slow (about 0.1 ms for a uid that /etc/passwd lacks and the next source is
/// asked for; LDAP takes longer), so the lookups run one call at a time on their own queue,
/// holding neither the threads that serve other connections nor orchd's stop, which does not
/// wait for them; and only admins may call it (``AccessPolicy/adminMethods``), the only callers
/// that ever list other users' jobs, so that no user can fill that queue ahead of them.
struct GetUserNamesHandler: VarlinkMethodHandler {
    static let method = ManagerInterface.getUserNames
    /// Changes nothing, and may queue behind other callers' lookups.
    static let mayWaitIndefinitely = true
    /// Where the lookups run, one at a time.
    private static let lookups = DispatchQueue(label: "orchd.user-names")

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(ManagerInterface.UserNamesParameters.self)
            guard parameters.uids.count <= ManagerInterface.UserNamesParameters.maximumCount else {
                throw .invalidParameter("uids")
            }
            Self.lookups.async {
                // A caller gone meanwhile is owed nothing.
                guard responder.isConnected() else { return }
                var names: [String: String] = [:]
                for uid in Set(parameters.uids) {
                    names[String(uid)] = UserAccount.name(uid: uid)
                }
                responder.reply(ManagerInterface.UserNamesReply(names: names))
            }
        } catch {
            responder.fail(error)
        }
    }
}
