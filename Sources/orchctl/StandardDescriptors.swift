import Glibc

/// Keeps descriptors 0, 1 and 2 taken, so that nothing orchctl opens lands on one of them.
///
/// A shell's `>&-` starts orchctl with standard output closed; its socket to orchd, the first
/// descriptor it opens, then took number 1, and its output (a job's ID, a status table) went
/// to orchd as a malformed call. Each closed one is opened on `/dev/null` for the other
/// direction (standard input for writing, standard output and error for reading), so using
/// it still fails with `EBADF`, as it would have closed: orchctl then reports that it cannot
/// write its output, instead of dropping it without a word.
enum StandardDescriptors {
    /// Opens `/dev/null` on each of descriptors 0-2 that is closed. Three `fcntl(2)` calls
    /// when none is.
    static func reserve() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", (descriptor == 0 ? O_WRONLY : O_RDONLY) | O_NOCTTY)
            // The lowest free number is the closed one, as the lower ones are taken; anything
            // else (no /dev/null) is left as it was.
            if opened >= 0 && opened != descriptor {
                _ = dup2(opened, descriptor)
                close(opened)
            }
        }
    }
}
