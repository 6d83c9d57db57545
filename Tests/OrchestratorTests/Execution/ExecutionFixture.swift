import Dispatch
import Foundation
import Orchestrator
import OrchestratorAPI
import Synchronization
import Testing

/// A temporary directory for one test, with helpers that launch a process and wait for its
/// exit event (never a sleep).
final class ExecutionFixture: Sendable {
    /// How long a test waits for an event before failing: generous, it is a safety net.
    static let safetyTimeout = DispatchTimeInterval.seconds(600)

    let directory: String
    let launcher = ProcessLauncher()
    let reaper = ChildReaper()
    let queue = DispatchQueue(label: "test.exec.events")

    init() throws {
        let template = NSTemporaryDirectory() + "/orchd-exec-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        directory = String(decoding: bytes.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A path inside the temporary directory.
    func path(_ name: String) -> String { directory + "/" + name }

    /// A request with logs `out` and `err` in the temporary directory, cwd there too.
    func request(_ arguments: [String], environment: [String: String] = ["PATH": "/usr/bin:/bin"]) -> LaunchRequest {
        LaunchRequest(
            arguments: arguments, workingDirectory: directory, environment: environment,
            standardOutputPath: path("out"), standardErrorPath: path("err"))
    }

    /// Launches `request` and waits for the reaper's exit callback.
    func run(_ request: LaunchRequest) throws -> (status: TerminationStatus, process: LaunchedProcess) {
        let process = try launcher.launch(request)
        let status = Mutex<TerminationStatus?>(nil)
        let exited = DispatchSemaphore(value: 0)
        reaper.watch(process, on: queue) { value in
            status.withLock { $0 = value }
            exited.signal()
        }
        #expect(exited.wait(timeout: .now() + Self.safetyTimeout) == .success, "process did not exit in time")
        return (try #require(status.withLock { $0 }), process)
    }

    /// The bytes of a file in the temporary directory.
    func contents(_ name: String) -> [UInt8] {
        (FileManager.default.contents(atPath: path(name))).map(Array.init) ?? []
    }

    /// The text of a file in the temporary directory.
    func text(_ name: String) -> String {
        String(decoding: contents(name), as: UTF8.self)
    }
}

extension OperationQueue {
    /// Waits until every operation added so far has finished, for at most `timeout`: unlike
    /// `waitUntilAllOperationsAreFinished()`, an operation that never finishes fails the test
    /// instead of hanging it.
    /// - Returns: whether they all finished in time.
    func waitUntilAllOperationsAreFinished(timeout: DispatchTimeInterval) -> Bool {
        let finished = DispatchSemaphore(value: 0)
        addBarrierBlock { finished.signal() }
        return finished.wait(timeout: .now() + timeout) == .success
    }
}
