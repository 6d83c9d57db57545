import Dispatch
import OrchestratorAPI

/// `orchctl wait ID... [--timeout SPAN]`: blocks until jobs finish.
enum WaitCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "wait",
        abstract: "Wait until jobs finish and exit with their status.",
        discussion: "The wait is event-driven: orchd answers when the last job finishes. With one job, exits with its status as a shell would report it (the exit code, 128+SIGNAL when signaled, 124 when timed out, 127 when it could not start, 1 when cancelled); with several, 0 when all succeeded, else 1. When --timeout runs out first, exits 124 and the jobs go on.",
        usage: "wait <id> ... [--timeout <span>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .oneOrMore, help: "The jobs to wait for.")],
        options: [.value("timeout", "span", kind: .timeSpan,
                         help: "Give up after this long, e.g. 30s, 5min, 1h30min.", default: "no limit")])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let ids = invocation.jobIDs
        let socket = context.socket(for: invocation)
        let uid = context.uid
        let jobs: [Job]
        if let timeout = invocation.value("timeout").flatMap(TimeSpan.parse) {
            guard let finished = try waitWithDeadline(ids: ids, socket: socket, uid: uid, timeout: timeout) else {
                context.console.printError("Error: timed out after \(TimeSpan.format(timeout)) waiting for \(describe(ids))")
                return .timedOut
            }
            jobs = finished
        } else {
            jobs = try wait(ids: ids, socket: socket, uid: uid)
        }
        if invocation.global.json {
            context.console.write(try JSONOutput.text(jobs))
        } else {
            for job in jobs { context.console.print("\(job.id) \(JobText.state(job.state))") }
        }
        return exitCode(for: jobs)
    }

    /// One job: its shell exit status; several: 0 when all succeeded, else 1.
    static func exitCode(for jobs: [Job]) -> ExitCode {
        if jobs.count == 1, let result = jobs[0].state.result {
            return ExitCode(result.shellExitStatus)
        }
        return jobs.allSatisfy { $0.state.result == .succeeded } ? .success : .failure
    }

    /// Calls `io.orchd.Jobs.Wait` on a new connection; it answers when all jobs have finished.
    static func wait(ids: [JobID], socket: String, uid: UInt32) throws(CommandFailure) -> [Job] {
        let connection = try OrchdConnection(socket: socket, uid: uid)
        return try connection.call("io.orchd.Jobs.Wait", JobsInterface.IDsParameters(ids: ids), returning: JobsInterface.JobsReply.self).jobs
    }

    /// Waits as ``wait(ids:socket:uid:)`` on another thread, giving up after `timeout`.
    /// The client blocks in read(2) without a deadline of its own, so the deadline is kept
    /// here; on timeout the blocked thread is left behind and ends with the process.
    /// - Returns: the finished jobs, or `nil` when the timeout ran out first.
    private static func waitWithDeadline(ids: [JobID], socket: String, uid: UInt32, timeout: Duration) throws(CommandFailure) -> [Job]? {
        let outcome = WaitOutcome()
        DispatchQueue.global().async {
            outcome.result = Result { () throws(CommandFailure) -> [Job] in try wait(ids: ids, socket: socket, uid: uid) }
            outcome.done.signal()
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = min(seconds, Int64(Int.max / 1_000_000_000 - 1)) * 1_000_000_000 + attoseconds / 1_000_000_000
        guard outcome.done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return nil }
        return try outcome.result?.get()
    }

    private static func describe(_ ids: [JobID]) -> String {
        ids.count == 1 ? "job \(ids[0])" : "jobs " + ids.map(\.description).joined(separator: ", ")
    }
}

/// The result of a wait running on another thread.
private final class WaitOutcome: @unchecked Sendable { // `result` is written before `done` is signalled and read only after waiting on it.
    let done = DispatchSemaphore(value: 0)
    var result: Result<[Job], CommandFailure>?
}
