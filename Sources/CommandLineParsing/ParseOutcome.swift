/// What a command line asks for.
public enum ParseOutcome: Hashable, Sendable {
    /// Run a command.
    case run(Invocation)
    /// Show help: for one command, or for the program itself when `nil`.
    case help(CommandSpec?)
    /// Show the version.
    case version
}
