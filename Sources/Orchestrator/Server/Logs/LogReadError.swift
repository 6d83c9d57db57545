import Glibc
import OrchestratorAPI

/// A log file could not be read or watched: the system call, the file and the errno; or a
/// log that must exist is gone (``isMissing``).
struct LogReadError: Error, Sendable {
    /// The failing call, e.g. `pread` or `inotify_add_watch`.
    var operation: String
    /// The log file (or the logs directory) it was about.
    var path: String
    /// The errno the call set.
    var code: Int32
    /// The file does not exist although the job's process was started, so it was created and
    /// then deleted or moved: its output is lost, which must not read as "no output".
    var isMissing = false
    /// Said instead of the errno's text, when there is a better reason.
    var reason: String?

    /// Captures the current `errno`.
    init(_ operation: String, path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// A started job's log file that does not exist.
    static func missing(_ path: String) -> LogReadError {
        var error = LogReadError("open", path: path, code: ENOENT)
        error.isMissing = true
        return error
    }

    /// Something other than the job's log file is at its path (a symbolic link, a FIFO, a
    /// hard link to another user's file): it is not read.
    static func notALogFile(_ path: String) -> LogReadError {
        var error = LogReadError("cannot read", path: path, code: EPERM)
        error.reason = "it is not a regular file of the job's owner (a link or special file is in its place)"
        return error
    }

    /// A message a user can act on: `cannot read /var/lib/orchd/logs/7.out: Permission denied`.
    var message: String {
        "\(operation) \(path): \(reason ?? String(cString: strerror(code)))"
    }

    /// The error the `Logs` call fails with: `LogMissing` for a missing log;
    /// `TooManyConnections` when orchd is short of file descriptors, which says nothing of
    /// the disk; else `StorageFailure` with ``message``.
    var varlinkError: VarlinkError {
        if isMissing { return JobsInterface.logMissing(path: path) }
        if code == EMFILE || code == ENFILE {
            return VarlinkError(ManagerInterface.Errors.tooManyConnections, [
                "message": .string("orchd is short of file descriptors (\(operation) \(path)); try again in a moment")
            ])
        }
        return JobsInterface.storageFailure(message)
    }
}
