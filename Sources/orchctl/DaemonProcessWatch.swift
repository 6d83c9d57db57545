import CPosix
import Glibc
import OrchestratorAPI

/// A hold on the orchd process at the other end of a connection, to wait for its exit:
/// `shutdown --wait` returns only once orchd has exited, so the state directory's lock is
/// free and another orchd can start on it at once. (Its connections close before its last
/// flush and checkpoint; a script that started the next orchd then found the lock still
/// held.)
///
/// The process is held by a pidfd (pidfd_open(2)), taken while orchd is known to be alive
/// (it answered on the connection), so a pid reused after its exit can never be mistaken
/// for it. It is taken only when the socket's peer is orchd itself: the pid the kernel
/// reports for the socket (`SO_PEERCRED`, the process that listened on it) must be the one
/// orchd reports (`GetInfo`). A socket systemd made (socket activation: the peer is systemd)
/// or an orchd in a pid namespace this one cannot see (the kernel reports pid 0) fail that
/// test, and then there is no process to wait for.
struct DaemonProcessWatch: ~Copyable {
    private let pidfd: Int32

    /// Takes a hold on orchd's process, or returns `nil` when the socket's peer is not orchd
    /// itself (see above) or the kernel has no pidfd for it.
    /// - Parameters:
    ///   - connection: a connection orchd has accepted.
    ///   - reportedPID: the pid orchd gives for itself (`GetInfo`).
    init?(connection: OrchdConnection, reportedPID: Int32) {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard cposix_peer_credentials(connection.socketDescriptor, &pid, &uid, &gid) == 0,
              pid > 0, pid == reportedPID else { return nil }
        let descriptor = cposix_pidfd_open(pid)
        guard descriptor >= 0 else { return nil }
        pidfd = descriptor
    }

    deinit {
        close(pidfd)
    }

    /// Blocks until the process has exited (its pidfd becomes readable, pidfd_open(2)).
    func waitForExit() {
        var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        while poll(&entry, 1, -1) < 0 && errno == EINTR {}
    }
}
