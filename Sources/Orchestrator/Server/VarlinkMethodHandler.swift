import OrchestratorAPI

/// The handler of one Varlink method. Each method of orchd's interfaces has its own type in
/// `Server/Handlers/`, registered in ``VarlinkService`` under its ``VarlinkMethod`` (the
/// descriptor orchctl calls it through).
protocol VarlinkMethodHandler: Sendable {
    /// The method's parameters.
    associatedtype Parameters: Codable & Sendable
    /// The method's reply.
    associatedtype Reply: Codable & Sendable
    /// The method handled, e.g. ``JobsInterface/submit``.
    static var method: VarlinkMethod<Parameters, Reply> { get }
    /// Handles one call; must end it with exactly one final reply through `responder`.
    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder)
    /// Whether a call may go on for as long as the client likes (a wait, a followed stream):
    /// a stop does not wait for its reply. Every other call's reply goes out before a stop
    /// closes the connections (``Scheduler/requestRepliesHandedOver(timeout:)``).
    static var mayWaitIndefinitely: Bool { get }
}

extension VarlinkMethodHandler {
    /// The method without its types, for the registration table.
    static var descriptor: AnyVarlinkMethod { method.erased }
    /// A call answers promptly, unless the handler says otherwise.
    static var mayWaitIndefinitely: Bool { false }
}
