#if canImport(Glibc)
import Glibc
#endif

/// Creating a directory and its missing parents (`mkdir -p`), each with the mode it is given.
enum DirectoryPath {
    /// A failed mkdir(2): the directory it was making, and errno.
    struct Failure: Error {
        let path: String
        let errno: Int32
    }

    /// Creates `path` and every missing directory above it. A directory made here gets
    /// exactly `mode(isLast)` (set with chmod(2) after mkdir(2), so neither the umask nor a
    /// change of the process-wide umask by another thread can narrow it); existing ones are
    /// left as they are.
    /// - Parameters:
    ///   - path: the directory, absolute or relative.
    ///   - mode: the mode of a directory made here, by whether it is `path` itself.
    /// - Throws: ``Failure`` for the first mkdir(2) that failed other than with EEXIST.
    static func create(_ path: String, mode: (_ isLast: Bool) -> mode_t) throws(Failure) {
        let components = path.split(separator: "/")
        var partial = path.hasPrefix("/") ? "" : "."
        for (index, component) in components.enumerated() {
            partial += "/" + component
            let wanted = mode(index == components.count - 1)
            if mkdir(partial, wanted) == 0 {
                _ = chmod(partial, wanted)
            } else if errno != EEXIST {
                throw Failure(path: partial, errno: errno)
            }
        }
    }
}
