import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI
import Synchronization
@testable import orchctl

/// Collects what a command writes, in place of the process's stdout and stderr.
final class CapturedConsole: Sendable {
    private let output = Mutex<[UInt8]>([])
    private let error = Mutex<[UInt8]>([])

    /// A console writing into this capture.
    var console: Console {
        Console(
            writeOutput: { bytes in self.output.withLock { $0 += bytes } },
            writeError: { bytes in self.error.withLock { $0 += bytes } },
            outputIsTerminal: false,
            terminalColumns: nil)
    }

    var standardOutput: String { output.withLock { String(decoding: $0, as: UTF8.self) } }
    var standardError: String { error.withLock { String(decoding: $0, as: UTF8.self) } }
}

/// A context for tests: captured console, a fixed environment, uid 1000, cwd `/tmp`.
func testContext(_ capture: CapturedConsole, environment: [String: String] = ["PATH": "/usr/bin:/bin", "HOME": "/home/test"]) -> CommandContext {
    CommandContext(console: capture.console, environment: environment, uid: 1000, currentDirectory: "/tmp",
                   time: TimeFormatter(utc: true))
}

/// Parses with orchctl's own command table.
func parse(_ arguments: [String]) throws(CommandLineError) -> ParseOutcome {
    try Orchctl.parser.parse(arguments)
}

/// Parses and expects a command to run.
func invocation(_ arguments: [String]) throws -> Invocation {
    guard case .run(let invocation) = try parse(arguments) else {
        throw CommandLineError(.missingCommand, "expected a command to run for \(arguments)")
    }
    return invocation
}

/// Parses and returns the error the parser throws, if any.
func parseError(_ arguments: [String]) -> CommandLineError? {
    do {
        _ = try parse(arguments)
        return nil
    } catch {
        return error
    }
}

/// A fixed instant: 2026-11-29T12:00:00Z.
let referenceDate = Timestamp.parse("2026-11-29T12:00:00Z")!

/// A job for table and rendering tests.
func makeJob(
    _ id: Int64, _ command: JobCommand, state: JobState, queue: String = "default", priority: Int = 0,
    submitted: Double = 0, started: Double? = nil, finished: Double? = nil
) -> Job {
    Job(
        id: JobID(rawValue: id),
        spec: JobSpec(command: command, cwd: "/tmp", environment: [:], queue: QueueName(rawValue: queue)!, priority: priority),
        state: state,
        attempt: started == nil ? 0 : 1,
        submittedAt: referenceDate.addingTimeInterval(submitted),
        startedAt: started.map { referenceDate.addingTimeInterval($0) },
        finishedAt: finished.map { referenceDate.addingTimeInterval($0) },
        submitterUid: 1000)
}
