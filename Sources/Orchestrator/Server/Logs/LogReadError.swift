import Glibc

/// A log file could not be read or watched: the system call, the file and the errno.
struct LogReadError: Error, Sendable {
    /// The failing call, e.g. `pread` or `inotify_add_watch`.
    var operation: String
    /// The log file (or the logs directory) it was about.
    var path: String
    /// The errno the call set.
    var code: Int32

    /// Captures the current `errno`.
    init(_ operation: String, path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// A message a user can act on: `cannot read /var/lib/orchd/logs/7.out: Permission denied`.
    var message: String {
        "\(operation) \(path): \(String(cString: strerror(code)))"
    }
}
