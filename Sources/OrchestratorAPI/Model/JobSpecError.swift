/// Why a ``JobSpec`` was refused. The daemon answers `io.orchd.Jobs.InvalidJobSpec` with
/// ``message``.
public enum JobSpecError: Error, Hashable, Sendable {
    case emptyCommand
    case relativeWorkingDirectory(String)
    case nulByte(field: String)
    case invalidEnvironmentName(String)
    /// A label key that is empty or has `=`: `--label key=value` and `status --label` could
    /// never name it.
    case invalidLabelKey(String)
    case invalidTimeout
    case startTooLate
    case invalidAttempts(Int)
    case emptyUniqueKey
    /// A unique key with a run of combining marks longer than stream-safe text allows: it is
    /// hashed, and hashing normalises it in time quadratic in the run.
    case uniqueKeyNotStreamSafe
    case invalidDependency
    /// A dependency names a job that does not exist.
    case unknownDependency(JobID)
    /// Two jobs of one batch have the same unique key.
    case duplicateUniqueKeyInBatch(String)

    /// A sentence a user can act on.
    public var message: String {
        switch self {
        case .emptyCommand: "the command is empty"
        case .relativeWorkingDirectory(let path): "the working directory must be an absolute path, not '\(path)'"
        case .nulByte(let field): "\(field) contains a NUL byte"
        case .invalidEnvironmentName(let name): "invalid environment variable name '\(name)'"
        case .invalidLabelKey(let key): "invalid label key '\(key)': a key is not empty and has no '='"
        case .invalidTimeout: "the timeout must be longer than zero and at most 100 years"
        case .startTooLate: "the start time must be before the year 10000"
        case .invalidAttempts(let count): "attempts must be from 1 to 1000 (retries 0 to 999), not \(count)"
        case .emptyUniqueKey: "the unique key is empty"
        case .uniqueKeyNotStreamSafe: "the unique key has more than \(JSONByteReader.maximumNonStarters) combining marks in a row"
        case .invalidDependency: "dependencies must be job IDs greater than zero"
        case .unknownDependency(let id): "no job with ID \(id) to depend on"
        case .duplicateUniqueKeyInBatch(let key): "two jobs of the batch have the unique key '\(key)'"
        }
    }
}
