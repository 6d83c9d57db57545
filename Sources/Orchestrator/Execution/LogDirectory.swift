import Glibc

/// The directory of one owner's job logs, `<log dir>/<owner uid>/`: mode 0700, and under the
/// system service owned by that user, so that they can read their logs and no one else can
/// list them.
enum LogDirectory {
    /// Creates `directory` (mode 0700) when missing; with `owner`, makes it that user's. When
    /// the directory above it is missing too (someone removed the whole log directory while
    /// orchd ran), that one is made again first, as at start-up, so that jobs do not fail
    /// until a restart.
    /// - Throws: ``LaunchError`` when it cannot be created, is not a directory (a symbolic
    ///   link included), or cannot be given to `owner`.
    static func prepare(_ directory: String, owner: UserAccount?) throws(LaunchError) {
        if mkdir(directory, 0o700) != 0 {
            var code = errno
            if code == ENOENT, let slash = directory.lastIndex(of: "/"), slash != directory.startIndex {
                let parent = String(directory[..<slash])
                let mode = parentMode
                if mkdir(parent, mode) == 0 { _ = chmod(parent, mode) }
                code = mkdir(directory, 0o700) == 0 ? 0 : errno
            }
            if code != 0 && code != EEXIST {
                throw LaunchError(code: code, context: "cannot create log directory \(directory)")
            }
        }
        guard let owner else { return }
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw LaunchError(code: ENOTDIR, context: "cannot use log directory \(directory)")
        }
        if info.st_uid != owner.uid || info.st_gid != owner.gid {
            guard lchown(directory, owner.uid, owner.gid) == 0 else {
                throw LaunchError(code: errno, context: "cannot give log directory \(directory) to \(owner.name)")
            }
        }
        if info.st_mode & 0o7777 != 0o700 { _ = chmod(directory, 0o700) }
    }

    /// The mode of the directory that holds the owners' directories: others may pass through
    /// it to their own (0711) when orchd runs as root, and no one else may when it does not.
    static var parentMode: mode_t { geteuid() == 0 ? 0o711 : 0o700 }
}
