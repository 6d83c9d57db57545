/// A mistake on `orchd`'s command line; `orchd` prints it and exits 64 (EX_USAGE).
public enum DaemonConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownArgument(String)
    case missingValue(String)
    /// Option, given value, what is wrong with it ("expected ..." or a span's reason).
    case invalidValue(String, String, String)

    public var description: String {
        switch self {
        case .unknownArgument(let argument): "unknown argument '\(argument)'"
        case .missingValue(let option): "missing value for '\(option)'"
        case .invalidValue(let option, let value, let problem): "invalid value '\(value)' for '\(option)': \(problem)"
        }
    }
}
