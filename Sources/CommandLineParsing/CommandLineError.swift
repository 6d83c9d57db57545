/// A command line that cannot run: the one error type of the parsing layer.
///
/// Always exits with ``ExitCode/usage`` (64). ``message`` is the text after `Error: `;
/// ``command`` selects the usage line and the `See 'orchctl <cmd> --help'.` hint.
public struct CommandLineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of mistake it is, for callers and tests that switch on it.
    public enum Code: Hashable, Sendable {
        /// The first word is not a command.
        case unknownCommand
        /// No command was given.
        case missingCommand
        /// An option no one declares.
        case unknownOption
        /// An option that takes a value was last, or followed by another option.
        case missingValue
        /// A flag was given a value (`--wait=yes`).
        case unexpectedValue
        /// A value that does not parse: not an integer, not `KEY=VALUE`, not a job ID...
        case invalidValue
        /// A required argument is missing.
        case missingArgument
        /// More arguments than the command takes.
        case unexpectedArgument
        /// Options that cannot be used together, or a required choice not made.
        case conflictingOptions
    }

    /// What kind of mistake.
    public var code: Code
    /// A sentence saying what is wrong, without the `Error: ` prefix.
    public var message: String
    /// The command whose usage to show; `nil` for the top level.
    public var command: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, command: String? = nil) {
        self.code = code
        self.message = message
        self.command = command
    }

    public var description: String { message }
}
