import OrchestratorAPI

/// What a running command may use: the console, the environment and a way to reach orchd.
struct CommandContext: Sendable {
    /// Where to print.
    var console: Console
    /// The process environment (captured by `submit`, read for the socket path).
    var environment: [String: String]
    /// The caller's uid (for the default socket and messages).
    var uid: UInt32
    /// The caller's working directory, when it could be read.
    var currentDirectory: String?
    /// How to show times.
    var time = TimeFormatter()

    /// The socket to use: `--socket`, else the default orchd uses too.
    func socket(for invocation: Invocation) -> String {
        OrchdPaths.socket(explicit: invocation.global.socket, environment: environment, uid: uid)
    }

    /// Opens a connection to orchd.
    /// - Throws: ``CommandFailure`` when it cannot be reached.
    func connect(_ invocation: Invocation) throws(CommandFailure) -> OrchdConnection {
        try OrchdConnection(socket: socket(for: invocation), uid: uid)
    }
}
