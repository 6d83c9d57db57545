import CommandLineParsing
import OrchestratorAPI

/// What a running command may use: the console, the environment and a way to reach orchd.
struct CommandContext: Sendable {
    /// Where to print.
    var console: Console
    /// The caller's uid (for the default socket and messages).
    var uid: UInt32
    /// The caller's working directory, when it could be read.
    var currentDirectory: String?
    /// How to show times.
    var time = TimeFormatter()
    /// Reads the environment when a command asks for it, not before: building it was a tenth
    /// of `orchctl --version`'s run.
    private let readEnvironment: @Sendable () -> ProcessEnvironment

    /// The process environment (captured by `submit`, read for the socket path).
    var environment: [String: String] { readEnvironment().variables }
    /// What reading the environment changed, a line per variable (`submit` warns of them).
    var environmentChanges: [String] { readEnvironment().changes }

    /// Creates a context with a fixed environment.
    init(console: Console, environment: [String: String], uid: UInt32, currentDirectory: String?, time: TimeFormatter = TimeFormatter()) {
        self.init(console: console, uid: uid, currentDirectory: currentDirectory, time: time, readEnvironment: { ProcessEnvironment(variables: environment) })
    }

    /// Creates a context whose environment `readEnvironment` reads on each use.
    init(
        console: Console, uid: UInt32, currentDirectory: String?, time: TimeFormatter = TimeFormatter(),
        readEnvironment: @escaping @Sendable () -> ProcessEnvironment
    ) {
        self.console = console
        self.uid = uid
        self.currentDirectory = currentDirectory
        self.time = time
        self.readEnvironment = readEnvironment
    }

    /// The width tables fit, in columns, when standard output is a terminal: `$COLUMNS` when
    /// it is a positive number (as ls(1) reads it), else the terminal's own width
    /// (TIOCGWINSZ), else 80. `nil` for a pipe or file: nothing is fitted.
    var tableWidth: Int? {
        guard console.outputIsTerminal else { return nil }
        if let columns = environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 { return columns }
        return console.terminalColumns ?? 80
    }

    /// Whether to colour output, by `--color` (``ColorMode``), the terminal and `NO_COLOR`.
    func colors(_ mode: ColorMode) -> Bool {
        mode.enabled(isTerminal: console.outputIsTerminal, environment: environment)
    }

    /// The socket to use: `--socket`, else the default orchd uses too, else the system
    /// service's (``OrchdPaths/clientSocket(explicit:environment:uid:exists:)``).
    /// - Throws: ``CommandFailure`` for a path chosen by default (not named by `--socket`,
    ///   `$ORCHD_SOCKET` or `$RUNTIME_DIRECTORY`) that another user may have put there
    ///   (``OrchdPaths/untrustedSocketReason(_:uid:)``): `/tmp/orchd-UID` without
    ///   XDG_RUNTIME_DIR, made first by someone else to read what orchctl sends.
    func socket(for invocation: Invocation) throws(CommandFailure) -> String {
        let path = OrchdPaths.clientSocket(explicit: invocation.global.socket, environment: environment, uid: uid)
        if !OrchdPaths.isNamed(explicit: invocation.global.socket, environment: environment),
            let reason = OrchdPaths.untrustedSocketReason(path, uid: uid) {
            throw CommandFailure(
                "will not connect to \(path): \(reason), so another user may have put it there to read what orchctl sends; remove it, set XDG_RUNTIME_DIR, or name a socket with --socket",
                exitCode: .unavailable)
        }
        return path
    }

    /// Opens a connection to orchd.
    /// - Throws: ``CommandFailure`` when it cannot be reached.
    func connect(_ invocation: Invocation) throws(CommandFailure) -> OrchdConnection {
        try OrchdConnection(socket: socket(for: invocation), uid: uid)
    }
}
