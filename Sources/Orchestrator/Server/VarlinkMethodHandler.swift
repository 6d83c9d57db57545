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
}

extension VarlinkMethodHandler {
    /// The method without its types, for the registration table.
    static var descriptor: AnyVarlinkMethod { method.erased }
}
