import Foundation
import Glibc
import Orchestrator
import OrchestratorAPI

// Before any thread exists, so every thread inherits the blocked signals.
Daemon.prepareSignals()

let arguments = Array(CommandLine.arguments.dropFirst())
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
    FileHandle.standardError.write(Data("Error: \(error)\nUsage: orchd [--state-dir DIR] [--socket PATH] [--concurrency N] [--kill-grace SPAN] [--log-level LEVEL]\nSee 'orchd --help'.\n".utf8))
    exit(64)
}
