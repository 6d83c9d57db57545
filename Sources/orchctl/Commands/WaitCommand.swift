import Dispatch
import OrchestratorAPI

/// `orchctl wait (ID... | --all) [--timeout SPAN]`: blocks until jobs finish.
enum WaitCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "wait",
        abstract: "Wait until jobs finish and exit with their status.",
        discussion: "The wait is event-driven: orchd answers when the last job finishes. With one job, exits with its status as a shell would report it (the exit code, 128+SIGNAL when signaled, 124 when timed out, 127 when it could not start, 1 when cancelled); with several, 0 when all succeeded, else 1. When --timeout runs out first, exits 124 and the jobs go on.\n\nWith --all, waits for every job not finished when it is called (jobs submitted later are not waited for), prints nothing, and exits 0 when all succeeded, else 1.",
        usage: "wait (<id> ... | --all) [--timeout <span>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .zeroOrMore, help: "The jobs to wait for.")],
        options: [
            .flag("all", help: "Wait for every job that has not finished yet."),
            .value("timeout", "span", kind: .timeSpan,
                   help: "Give up after this long, e.g. 30s, 5min, 1h30min.", default: "no limit"),
        ])

    /// How many IDs go into one `Wait` call of `--all`, to keep calls and replies small.
    static let idsPerCall = 10_000

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let all = invocation.flag("all")
        switch (all, invocation.jobIDs.isEmpty) {
        case (true, false):
            throw CommandLineError(.conflictingOptions, "give either job IDs or --all, not both", command: spec.name)
        case (false, true):
            throw CommandLineError(.missingArgument, "missing argument '<id>' (or --all)", command: spec.name)
        default:
            break
        }
        let socket = context.socket(for: invocation)
        let uid = context.uid
        let ids = all ? try unfinishedJobs(socket: socket, uid: uid) : invocation.jobIDs
        if ids.isEmpty {
            if invocation.global.json { context.console.write(try JSONOutput.text([Job]())) }
            return .success
        }
        let waitForAll: @Sendable () throws(CommandFailure) -> [Job] = { () throws(CommandFailure) -> [Job] in try wait(ids: ids, socket: socket, uid: uid) }
        let jobs: [Job]
        if let timeout = invocation.value("timeout").flatMap(TimeSpan.parse) {
            guard let finished = try waitWithDeadline(timeout: timeout, waitForAll) else {
                context.console.printError("Error: timed out after \(TimeSpan.format(timeout)) waiting for \(describe(ids))")
                return .timedOut
            }
            jobs = finished
        } else {
            jobs = try waitForAll()
        }
        if invocation.global.json {
            context.console.write(try JSONOutput.text(jobs))
        } else if !all {
            for job in jobs { context.console.print("\(job.id) \(JobText.state(job.state))") }
        }
        if all {
            return jobs.allSatisfy { $0.state.result == .succeeded } ? .success : .failure
        }
        return exitCode(for: jobs)
    }

    /// The IDs of every job waiting, queued or running now.
    static func unfinishedJobs(socket: String, uid: UInt32) throws(CommandFailure) -> [JobID] {
        let connection = try OrchdConnection(socket: socket, uid: uid)
        var ids: [JobID] = []
        for state in ["waiting", "queued", "running"] {
            try connection.stream("io.orchd.Jobs.List", JobsInterface.ListParameters(state: state), returning: JobsInterface.JobsReply.self) { (reply) throws(CommandFailure) in
                ids += reply.jobs.map(\.id)
            }
        }
        // A job may move from one state to the next between the calls.
        return Array(Set(ids)).sorted()
    }

    /// One job: its shell exit status; several: 0 when all succeeded, else 1.
    static func exitCode(for jobs: [Job]) -> ExitCode {
        if jobs.count == 1, let result = jobs[0].state.result {
            return ExitCode(result.shellExitStatus)
        }
        return jobs.allSatisfy { $0.state.result == .succeeded } ? .success : .failure
    }

    /// Calls `io.orchd.Jobs.Wait` on a new connection, in calls of at most ``idsPerCall`` IDs;
    /// it answers when all jobs have finished.
    static func wait(ids: [JobID], socket: String, uid: UInt32) throws(CommandFailure) -> [Job] {
        let connection = try OrchdConnection(socket: socket, uid: uid)
        var jobs: [Job] = []
        for start in stride(from: 0, to: ids.count, by: idsPerCall) {
            let chunk = Array(ids[start..<min(start + idsPerCall, ids.count)])
            jobs += try connection.call("io.orchd.Jobs.Wait", JobsInterface.IDsParameters(ids: chunk), returning: JobsInterface.JobsReply.self).jobs
        }
        return jobs
    }

    /// Runs `body` (a wait) on another thread, giving up after `timeout`.
    /// The client blocks in read(2) without a deadline of its own, so the deadline is kept
    /// here; on timeout the blocked thread is left behind and ends with the process.
    /// - Returns: the finished jobs, or `nil` when the timeout ran out first.
    private static func waitWithDeadline(
        timeout: Duration, _ body: @escaping @Sendable () throws(CommandFailure) -> [Job]
    ) throws(CommandFailure) -> [Job]? {
        let outcome = WaitOutcome()
        DispatchQueue.global().async {
            outcome.result = Result { () throws(CommandFailure) -> [Job] in try body() }
            outcome.done.signal()
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = min(seconds, Int64(Int.max / 1_000_000_000 - 1)) * 1_000_000_000 + attoseconds / 1_000_000_000
        guard outcome.done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return nil }
        return try outcome.result?.get()
    }

    private static func describe(_ ids: [JobID]) -> String {
        if ids.count > 10 { return "\(JobTable.grouped(ids.count)) jobs" }
        return ids.count == 1 ? "job \(ids[0])" : "jobs " + ids.map(\.description).joined(separator: ", ")
    }
}

/// The result of a wait running on another thread.
private final class WaitOutcome: @unchecked Sendable { // `result` is written before `done` is signalled and read only after waiting on it.
    let done = DispatchSemaphore(value: 0)
    var result: Result<[Job], CommandFailure>?
}
