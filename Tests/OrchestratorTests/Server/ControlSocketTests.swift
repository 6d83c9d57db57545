import Foundation
import Glibc
import Testing

@testable import Orchestrator

@Suite("Control socket modes")
struct ControlSocketTests {
    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test("a per-user socket is 0600 in a new 0700 directory; the system service's 0666 in a new 0755 one", arguments: [false, true])
    func modes(everyUser: Bool) throws {
        var template = Array("/tmp/orchd-socket-XXXXXX".utf8CString)
        let base = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: base) }
        let path = base + "/run/orchd/orchd.sock"
        let fd = try ControlSocket.bind(path: path, everyUser: everyUser)
        defer { close(fd) }
        #expect(mode(path) == (everyUser ? 0o666 : 0o600))
        #expect(mode(base + "/run/orchd") == (everyUser ? 0o755 : 0o700))
        #expect(mode(base + "/run") == (everyUser ? 0o755 : 0o700))
    }
}
