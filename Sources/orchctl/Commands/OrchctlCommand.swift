import CommandLineParsing
/// A command of orchctl: its declaration and what it does.
protocol OrchctlCommand: Sendable {
    /// The command's options as one typed value (``NoOptions`` when it has none).
    associatedtype Options: CommandOptions = NoOptions
    /// The command's words (`submit`, `queue set`), known without building ``spec``.
    static var name: String { get }
    /// The declaration the parser and help renderer use.
    static var spec: CommandSpec { get }
    /// Runs the command.
    /// - Returns: the exit status.
    /// - Throws: ``CommandFailure`` for failures to report, ``CommandLineError`` for usage
    ///   errors found only while running (e.g. options that conflict).
    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode
}

extension OrchctlCommand {
    /// The options of `invocation`, decoded into ``Options``.
    static func options(of invocation: Invocation) -> Options {
        Options(decoding: invocation)
    }
}
