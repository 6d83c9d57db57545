import Foundation
import Glibc
import Orchestrator
import OrchestratorAPI

let arguments = Array(CommandLine.arguments.dropFirst())
// Before any thread exists, so every thread inherits the blocked signals.
Daemon.prepareSignals(arguments: arguments)

do {
    switch try DaemonConfiguration.parse(arguments, environment: ProcessInfo.processInfo.environment, uid: geteuid()) {
    case .help:
        print(DaemonConfiguration.usage)
    case .version:
        print("orchd \(OrchdVersion.string)")
    case .run(let configuration):
        exit(Daemon.run(configuration: configuration))
    }
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\nUsage: \(DaemonConfiguration.shortUsage)\nSee 'orchd --help'.\n".utf8))
    SystemdNotifier().failed(errno: EINVAL, status: "failed: \(error)")
    exit(64)
}
