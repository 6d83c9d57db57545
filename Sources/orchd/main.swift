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
        print(DaemonConfiguration.help, terminator: "")
    case .version:
        print("orchd \(OrchdVersion.string)")
    case .run(let configuration):
        exit(Daemon.run(configuration: configuration))
    }
} catch {
    // The message quotes the arguments; control characters in them are shown, not obeyed.
    let message = error.message.visible
    FileHandle.standardError.write(Data("Error: \(message)\nUsage: \(DaemonConfiguration.usage)\nSee 'orchd --help'.\n".utf8))
    SystemdNotifier().failed(errno: EINVAL, status: "failed: \(message)")
    exit(64)
}
