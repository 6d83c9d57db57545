import OrchestratorAPI

/// `io.orchd.Manager.GetUserNames`: the login names of user IDs, for orchctl's OWNER and USER
/// columns. orchctl is a static executable and must not load NSS modules itself (a static glibc
/// that loads one for a uid /etc/passwd lacks crashes), so it asks orchd, which links glibc
/// dynamically. Answered on the caller's connection, not on the control queue: a slow password
/// database (LDAP, say) holds that caller alone. Any caller may ask, as any local user may read
/// passwd(5).
struct GetUserNamesHandler: VarlinkMethodHandler {
    static let method = ManagerInterface.getUserNames

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(ManagerInterface.UserNamesParameters.self)
            guard parameters.uids.count <= ManagerInterface.UserNamesParameters.maximumCount else {
                throw .invalidParameter("uids")
            }
            var names: [String: String] = [:]
            for uid in Set(parameters.uids) {
                names[String(uid)] = UserAccount.name(uid: uid)
            }
            responder.reply(ManagerInterface.UserNamesReply(names: names))
        } catch {
            responder.fail(error)
        }
    }
}
