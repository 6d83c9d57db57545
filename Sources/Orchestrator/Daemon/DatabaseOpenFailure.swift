import Glibc

/// The start-up message when the job database cannot be opened.
///
/// SQLite reports a path that is a directory, a FIFO or a device as "unable to open database
/// file" (error 14), which does not say what to fix; a look at the path does.
enum DatabaseOpenFailure {
    /// What to tell the user about `error`, met opening the database at `path`.
    /// - Parameters:
    ///   - path: the database file, e.g. `/var/lib/orchd/orchd.db`.
    ///   - error: what opening it threw.
    static func message(path: String, error: any Error) -> String {
        var info = stat()
        if lstat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFREG, S_IFLNK: break
            case S_IFDIR:
                return "cannot open the job database \(path): it is a directory; move it away (orchd creates the file)"
            default:
                return "cannot open the job database \(path): it is not a regular file; move it away (orchd creates the file)"
            }
        }
        return "cannot open the job database \(path): \(error)"
    }
}
