import Glibc

/// The control socket orchd serves: the one systemd passes (`orchd.socket`,
/// sd_listen_fds(3)), else one bound here at the configured path.
///
/// At the stop its file is removed only if it is still the one bound here: a
/// socket-activated one belongs to systemd, and so does one `orchd.socket` put in its place
/// while orchd ran.
struct ListeningSocket {
    /// The listening descriptor.
    let fd: Int32
    /// The path clients connect to: the passed socket's when systemd passed one, else the
    /// configured one.
    let path: String
    /// Whether systemd passed the socket.
    let isFromSystemd: Bool
    /// The device and inode of the file bound here; `nil` when the file is not orchd's.
    private let boundFile: (device: dev_t, inode: ino_t)?

    /// Takes the socket systemd passed, or binds one at `configuredPath`.
    /// - Parameter configuredPath: `--socket`'s path.
    /// - Throws: ``Daemon/StartupFailure``: what systemd passed cannot be used, or the path
    ///   cannot be bound.
    static func take(configuredPath: String) throws(Daemon.StartupFailure) -> ListeningSocket {
        let passed: Int32?
        do {
            passed = try SocketActivation.listeningSocket()
        } catch {
            throw Daemon.StartupFailure(error.description, errno: error.errno)
        }
        if let fd = passed {
            return ListeningSocket(
                fd: fd, path: SocketActivation.boundPath(of: fd) ?? configuredPath, isFromSystemd: true, boundFile: nil)
        }
        let fd: Int32
        do {
            fd = try ControlSocket.bind(path: configuredPath, everyUser: geteuid() == 0)
        } catch {
            throw Daemon.StartupFailure(error.description, errno: error.errno)
        }
        var bound = stat()
        let boundFile = stat(configuredPath, &bound) == 0 ? (bound.st_dev, bound.st_ino) : nil
        return ListeningSocket(fd: fd, path: configuredPath, isFromSystemd: false, boundFile: boundFile)
    }

    /// Removes the socket file if it is still the one bound here.
    func removeFileIfOurs() {
        var now = stat()
        guard let boundFile, stat(path, &now) == 0, now.st_dev == boundFile.device, now.st_ino == boundFile.inode
        else { return }
        unlink(path)
    }

    /// Closes the descriptor (when start-up fails before the server owns it).
    func close() {
        _ = Glibc.close(fd)
    }
}
