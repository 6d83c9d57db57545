import Glibc

/// Why the configuration file could not be used. At start-up orchd exits 1 with it; at a
/// reload it is logged and the current settings stay.
public enum ConfigurationFileError: Error, Sendable, CustomStringConvertible {
    /// The file could not be opened or read (a missing `--config` file is one).
    case unreadable(path: String, errno: Int32)
    /// A line is not `key = value` with a known key and a valid value; `line` counts from 1.
    case invalidLine(path: String, line: Int, reason: String)
    /// The path names something that is not a file to read (a named pipe, a socket), which
    /// would block the read until a writer came.
    case notAFile(path: String, kind: String)

    /// The errno to report to systemd (`ERRNO=`).
    public var errno: Int32 {
        switch self {
        case .unreadable(_, let code): code
        case .invalidLine: EINVAL
        case .notAFile: EINVAL
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let path, let code):
            "cannot read configuration file \(path): \(String(cString: strerror(code)))"
        case .invalidLine(let path, let line, let reason):
            "configuration file \(path), line \(line): \(reason)"
        case .notAFile(let path, let kind):
            "cannot read configuration file \(path): it is \(kind), not a file"
        }
    }
}
