import OrchestratorAPI

/// The handler of one Varlink method. Each method of orchd's interfaces has its own type in
/// `Server/Handlers/`, listed in ``VarlinkService``'s dispatch table.
protocol VarlinkMethodHandler: Sendable {
    /// The qualified method name, e.g. `io.orchd.Jobs.Submit`.
    static var method: String { get }
    /// Whether the method only makes sense with `more` (`org.varlink.service.ExpectedMore`
    /// otherwise).
    static var requiresMore: Bool { get }
    /// Handles one call; must end it with exactly one final reply through `responder`.
    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder)
}

extension VarlinkMethodHandler {
    static var requiresMore: Bool { false }
}
