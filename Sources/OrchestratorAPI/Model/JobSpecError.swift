/// Why a ``JobSpec`` was refused. The daemon answers `io.orchd.Jobs.InvalidJobSpec` with
/// ``message``.
public enum JobSpecError: Error, Hashable, Sendable {
    case emptyCommand
    case relativeWorkingDirectory(String)
    case nulByte(field: String)
    case invalidEnvironmentName(String)

    /// A sentence a user can act on.
    public var message: String {
        switch self {
        case .emptyCommand: "the command is empty"
        case .relativeWorkingDirectory(let path): "the working directory must be an absolute path, not '\(path)'"
        case .nulByte(let field): "\(field) contains a NUL byte"
        case .invalidEnvironmentName(let name): "invalid environment variable name '\(name)'"
        }
    }
}
