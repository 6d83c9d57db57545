/// The options every command accepts, before or after the command word.
public struct GlobalOptions: Hashable, Sendable {
    /// `--socket PATH`: the daemon's socket, overriding the default (``OrchdPaths``).
    public var socket: String?
    /// `--json`: machine-readable output.
    public var json = false

    /// Their declarations, for the parser and for help.
    public static let specs: [OptionSpec] = [
        .value("socket", "path", kind: .path, help: "The orchd control socket. (default: $ORCHD_SOCKET, else the per-user or system socket)"),
        .flag("json", help: "Print machine-readable JSON instead of text."),
    ]

    /// `-h, --help`.
    public static let help = OptionSpec.flag("help", short: "h", help: "Show help information.")
    /// `--version`.
    public static let version = OptionSpec.flag("version", help: "Show the version.")
}
