import Foundation

/// Why ``ProcessLauncher`` could not start a process.
///
/// ``code`` is the `errno` value behind the failure (switch on `ENOENT`, `EACCES`, ...);
/// ``message`` is a sentence a user can act on, such as `command not found: foo` or
/// `working directory /x: No such file or directory`. The scheduler records it as
/// `JobResult.spawnFailed(reason:)`.
public struct LaunchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value (errno(3)) that caused the failure.
    public var code: Int32
    /// What went wrong, naming the file or command involved.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: the `errno` value.
    ///   - message: a sentence a user can act on.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// Creates an error whose message is `context: <strerror(code)>`.
    /// - Parameters:
    ///   - code: the `errno` value.
    ///   - context: what was being done, e.g. `cannot open log file /x`.
    public init(code: Int32, context: String) {
        self.init(code: code, message: "\(context): \(Self.describe(code))")
    }

    /// The text of an `errno` value, from strerror(3).
    /// - Parameter code: the `errno` value.
    /// - Returns: e.g. `No such file or directory` for `ENOENT`.
    public static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// The ``message``.
    public var description: String { message }
}
