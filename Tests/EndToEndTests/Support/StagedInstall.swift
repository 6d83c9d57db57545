import Foundation
import Testing

/// A staged install by `scripts/install.sh` of the binaries under test into a temporary
/// `DESTDIR`, whose orchd runs outside systemd on a socket, state directory and log of its own
/// in that directory. The orchd is stopped and the directory removed when the value goes.
final class StagedInstall {
    let directory: String
    /// `DESTDIR`.
    let destination: String
    let socket: String
    let log: String
    let state: String
    /// The repository, where the scripts run.
    let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    /// The scripts' environment: this one with the install's variables.
    let environment: [String: String]
    var installedOrchctl: String { destination + "/usr/local/bin/orchctl" }

    init() throws {
        var template = Array("/tmp/orchd-install-XXXXXX".utf8CString)
        directory = String(cString: try #require(mkdtemp(&template)))
        destination = directory + "/root"
        socket = directory + "/orchd.sock"
        log = directory + "/orchd.log"
        state = directory + "/state"
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = nil
        environment["DESTDIR"] = destination
        environment["ORCHD_BIN_DIR"] = Binaries.directory
        environment["ORCHD_NO_SYSTEMD"] = "1"
        environment["ORCHD_ALLOW_NON_ROOT"] = "1"
        environment["ORCHD_STATE_DIR"] = state
        environment["ORCHD_SOCKET"] = socket
        environment["ORCHD_LOG"] = log
        self.environment = environment
    }

    deinit {
        _ = try? TestDaemon.run(installedOrchctl, ["--socket", socket, "shutdown", "--wait"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs the shell command line `command` in the repository with the install's
    /// environment; timeout(1) turns a hang into exit 124 instead of a stuck test run.
    func run(_ command: String) throws -> CommandResult {
        try TestDaemon.run("/bin/sh", ["-c", "timeout 120 \(command)"], workingDirectory: repository, environment: environment)
    }

    /// Runs the installed orchctl against the install's orchd.
    func orchctl(_ arguments: [String]) throws -> CommandResult {
        try TestDaemon.run(installedOrchctl, ["--socket", socket] + arguments)
    }
}
