import OrchestratorAPI

/// Routes calls to the method handlers and answers the `org.varlink.service` interface.
///
/// Authorisation of the caller happens here, once for every method (``AccessPolicy``): a
/// per-user daemon answers only its own user and root (its socket's mode already keeps others
/// out, this is the second wall); the system service answers everyone, but admin methods
/// need an admin and submitting may be restricted. Which jobs a caller may act on is the
/// scheduler's to decide (``Scheduler/authorize(_:toManage:)``).
final class VarlinkService: Sendable {
    /// The registration table: each handler under its method's qualified name.
    let handlers: [String: Registration]

    /// A registered handler, with what is checked before it runs (kept, not derived per call).
    struct Registration: Sendable {
        let handler: any VarlinkMethodHandler
        let requiresMore: Bool
        /// Counted in ``VarlinkService/unanswered`` until its final reply.
        let counted: Bool
    }
    /// Why a call that reaches orchd as its stop closes the connections is refused.
    static let closingMessage = "orchd is stopping and took no more calls, so nothing was changed; try again once it runs"
    /// The policy in force now (a reload may change it).
    private let policy: @Sendable () -> AccessPolicy
    /// The calls being handled whose replies a stop waits for (all but the indefinite ones).
    private let unanswered: UnansweredRequests?

    /// The interfaces this service implements, with their descriptions in the Varlink
    /// interface definition syntax, as committed in `Server/Interfaces/*.varlink`.
    static let interfaceDescriptions: [String: String] = [
        ServiceInterface.name: String(decoding: PackageResources.org_varlink_service_varlink, as: UTF8.self),
        JobsInterface.name: String(decoding: PackageResources.io_orchd_Jobs_varlink, as: UTF8.self),
        ManagerInterface.name: String(decoding: PackageResources.io_orchd_Manager_varlink, as: UTF8.self),
        QueuesInterface.name: String(decoding: PackageResources.io_orchd_Queues_varlink, as: UTF8.self),
    ]

    /// Creates the service.
    /// - Parameters:
    ///   - handlers: one handler per method (``OrchdInterfaces/methods`` in orchd; a test
    ///     checks that list against the handlers); two for one method is a programming error.
    ///   - policy: who may call what, read at each call.
    ///   - unanswered: counts each call being handled, but those that may wait
    ///     indefinitely, until its final reply has been handed to the connection.
    init(
        handlers: [any VarlinkMethodHandler], policy: @escaping @Sendable () -> AccessPolicy,
        unanswered: UnansweredRequests? = nil
    ) {
        var table: [String: Registration] = [:]
        for handler in handlers {
            let method = type(of: handler).descriptor
            precondition(table[method.name] == nil, "two handlers for \(method.name)")
            table[method.name] = Registration(
                handler: handler, requiresMore: method.requiresMore, counted: !type(of: handler).mayWaitIndefinitely)
        }
        self.handlers = table
        self.policy = policy
        self.unanswered = unanswered
    }

    /// Whether a call of `method` may go on for as long as its client likes (a wait, a
    /// stream): a stop closes its connection without waiting for its reply.
    func mayWaitIndefinitely(_ method: String) -> Bool {
        handlers[method].map { !$0.counted } ?? false
    }

    /// Handles one call: checks the caller, finds the handler, and lets it reply.
    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        let policy = policy()
        guard let caller = policy.caller(uid: call.peer.uid) else {
            responder.fail(.permissionDenied(policy.otherUserRefusal))
            return
        }
        if let refusal = policy.refusal(of: call.method, by: caller) {
            responder.fail(.permissionDenied(refusal))
            return
        }
        var call = call
        call.caller = caller
        guard let registration = handlers[call.method] else {
            let interface = call.method.split(separator: ".").dropLast().joined(separator: ".")
            if Self.interfaceDescriptions[interface] == nil {
                responder.fail(.interfaceNotFound(interface))
            } else {
                responder.fail(.methodNotFound(call.method))
            }
            return
        }
        if registration.requiresMore && !call.more && !call.oneway {
            responder.fail(.expectedMore())
            return
        }
        guard registration.counted, let unanswered else {
            return registration.handler.handle(call, responder: responder)
        }
        guard let counted = responder.counted(in: unanswered) else {
            // The stop is about to close the connections: a change made now might never be
            // acknowledged, so none is made.
            return responder.fail(JobsInterface.stopping(message: Self.closingMessage))
        }
        registration.handler.handle(call, responder: counted)
    }
}
