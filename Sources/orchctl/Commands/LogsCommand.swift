import CommandLineParsing
#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import OrchestratorAPI

/// `orchctl logs ID [--stderr] [--follow] [--tail N]`: a job's captured output, byte-exact,
/// from `io.orchd.Jobs.Logs`.
enum LogsCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "logs",
        abstract: "Print a job's output, or follow it as it grows.",
        discussion: """
            The bytes are written unchanged, so binary output survives a pipe. A job that has not started (waiting, queued, or ended before a process ran: dependency_failed, spawn_failed) has no output yet and prints nothing. A job that started but whose log file is gone (deleted or moved) is an error naming the file, exit status 1: its output is lost, which is not the same as no output.

            With --follow, goes on with new output as the job writes it, each piece as soon as it arrives, and ends with exit status 0 once the job has finished and all its output is printed; a job still waiting or queued is followed from its start. Ctrl-C, or whatever reads the output going away, ends it early, also with exit status 0. When a failed attempt is retried (submit --retries), the next attempt's output follows from its start.
            """,
        usage: "logs <id> [--stderr] [--follow] [--tail <lines>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The job's ID.")],
        options: Options.specs)

    /// `logs`' options.
    struct Options: CommandOptions {
        var stderr = false
        var follow = false
        var tail: Int?

        static let bindings: [OptionBinding<Options>] = [
            .flag(\.stderr, "stderr", help: "Print the job's standard error instead of its standard output."),
            .flag(\.follow, "follow", short: "f", help: "Keep printing new output until the job has finished."),
            .value(\.tail, "tail", "lines", kind: .integerIn(0...Int.max),
                   help: "Start with the last this many lines (a last line without a newline counts).",
                   default: "all the output"),
        ]
    }

    /// The `Logs` call's parameters; options not given are left out.
    static func parameters(_ invocation: Invocation) -> JobsInterface.LogsParameters {
        let options = Options(decoding: invocation)
        return JobsInterface.LogsParameters(
            id: invocation.jobIDs[0], stream: options.stderr ? .stderr : .stdout, tailLines: options.tail,
            follow: options.follow ? true : nil)
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let parameters = parameters(invocation)
        try StreamSession.run(follow: parameters.follow == true, context: context, invocation: invocation) {
            (socket, uid, console) throws(CommandFailure) in
            try stream(parameters, socket: socket, uid: uid, console: console)
        }
        return .success
    }

    /// Writes each chunk as it arrives, until orchd ends the stream or nothing reads the
    /// output any more (`EPIPE`, a normal end).
    /// - Throws: ``CommandFailure`` when orchd cannot be reached or fails, sends data that is
    ///   not base64, or the output cannot be written for another reason (a full disk).
    static func stream(
        _ parameters: JobsInterface.LogsParameters, socket: String, uid: UInt32, console: Console
    ) throws(CommandFailure) {
        let connection = try OrchdConnection(socket: socket, uid: uid)
        try connection.streamWhile(JobsInterface.logs, parameters) {
            (reply) throws(CommandFailure) -> Bool in
            guard let data = Data(base64Encoded: reply.data) else {
                throw CommandFailure("orchd sent log data that is not base64")
            }
            if data.isEmpty { return true }
            switch console.writeOutputChecked(Array(data)) {
            case 0: return true
            case EPIPE: return false
            case let code: throw CommandFailure("cannot write to standard output: \(String(cString: strerror(code)))")
            }
        }
    }
}
