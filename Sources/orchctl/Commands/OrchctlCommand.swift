/// A command of orchctl: its declaration and what it does.
protocol OrchctlCommand: Sendable {
    /// The declaration the parser and help renderer use.
    static var spec: CommandSpec { get }
    /// Runs the command.
    /// - Returns: the exit status.
    /// - Throws: ``CommandFailure`` for failures to report, ``CommandLineError`` for usage
    ///   errors found only while running (e.g. options that conflict).
    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode
}
