/// Everything ``ProcessLauncher`` needs to start one job process.
///
/// The process gets `/dev/null` as standard input and the two log files as standard output
/// and standard error, all opened by the daemon; it sees no other file descriptor of the
/// daemon.
public struct LaunchRequest: Hashable, Sendable {
    /// The search path used when ``environment`` has no `PATH` (the same default as
    /// execvp(3) on glibc, without the current directory).
    public static let defaultSearchPath = "/usr/local/bin:/usr/bin:/bin"

    /// The exact argument vector. `arguments[0]` is looked up in the request environment's
    /// `PATH` (``defaultSearchPath`` when unset) unless it contains a `/`.
    public var arguments: [String]
    /// The directory the process starts in (absolute; a relative one is resolved against the
    /// daemon's own working directory).
    public var workingDirectory: String
    /// The complete environment of the process; nothing of the daemon's is inherited.
    public var environment: [String: String]
    /// The file standard output goes to: created or truncated, mode 0600, owned by
    /// ``user`` when one is given. Its directory is created (mode 0700, owned likewise) when
    /// missing.
    public var standardOutputPath: String
    /// The file standard error goes to, as ``standardOutputPath``. It may equal
    /// ``standardOutputPath``; both streams then share one file offset, as `2>&1` would.
    public var standardErrorPath: String
    /// The cgroup the process starts in (created if missing), or `nil` for orchd's own.
    public var cgroup: Cgroup?
    /// The uid the process runs as, with that user's groups and `HOME`, `USER`, `LOGNAME` and
    /// `SHELL` (a root daemon drops to it before exec); `nil`: the daemon's own identity.
    public var user: UInt32?

    /// Creates a request.
    /// - Parameters:
    ///   - arguments: the argument vector; must not be empty.
    ///   - workingDirectory: the directory the process starts in.
    ///   - environment: the process's complete environment.
    ///   - standardOutputPath: the log file for standard output.
    ///   - standardErrorPath: the log file for standard error.
    ///   - cgroup: the cgroup to start the process in; `nil`: orchd's own.
    ///   - user: the uid to run as; `nil`: the daemon's own.
    public init(
        arguments: [String],
        workingDirectory: String,
        environment: [String: String],
        standardOutputPath: String,
        standardErrorPath: String,
        cgroup: Cgroup? = nil,
        user: UInt32? = nil
    ) {
        self.cgroup = cgroup
        self.user = user
        self.arguments = arguments
        self.workingDirectory = workingDirectory
        self.environment = environment
        self.standardOutputPath = standardOutputPath
        self.standardErrorPath = standardErrorPath
    }
}
