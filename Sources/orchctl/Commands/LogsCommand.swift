import CommandLineParsing
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import FoundationEssentials
import OrchestratorAPI
import Synchronization

/// `orchctl logs ID [--stderr | --both] [--attempt N] [--follow] [--tail N]`: a job's captured
/// output, byte-exact, from `io.orchd.Jobs.Logs`.
enum LogsCommand: OrchctlCommand {
    static let name = "logs"
    static let spec = CommandSpec(
        name: name,
        abstract: "Print a job's output, or follow it as it grows.",
        discussion: """
            The bytes are written unchanged, so binary output survives a pipe. A job that has not started (waiting, queued, or ended before a process ran: dependency_failed, spawn_failed) has no output yet: nothing is printed, and a line on standard error says why. A job that started but whose log file is gone (deleted or moved) is an error naming the file, exit status 1: its output is lost, which is not the same as no output. When the standard output printed is empty and the job wrote to its standard error, a one-line hint on standard error says so.

            Each attempt keeps its own output: without --attempt, the latest attempt's is printed; --attempt N prints attempt N's ('orchctl show' lists the attempts). An attempt the job has not made is an error, exit status 1.

            --both prints the standard output, then the standard error; on a terminal each under a header (==> stdout <==, ==> stderr <==), plain when piped. With --follow, both streams are followed at once: what they hold already comes as without --follow (the standard output first), then each piece as it arrives, under a header whenever the stream changes (on a terminal).

            With --follow, goes on with new output as the job writes it, each piece as soon as it arrives, and ends with exit status 0 once the job has finished and all its output is printed; a job still waiting or queued is followed from its start. Ctrl-C, or whatever reads the output going away, ends it early, also with exit status 0. When a failed attempt is retried (submit --retries), the next attempt's output follows from its start (with --attempt, only that attempt is followed). When orchd restarts meanwhile, orchctl says so once on standard error, reconnects for up to --reconnect-timeout and goes on from the byte it had reached.
            """,
        usage: "logs <id> [--stderr | --both] [--attempt <n>] [--follow] [--tail <lines>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .one, help: "The job's ID.")],
        options: Options.specs,
        withoutJSON: "logs prints the job's output as the job wrote it; its fields are in 'orchctl show ID --json'")

    /// `logs`' options.
    struct Options: CommandOptions {
        var stderr = false
        var both = false
        var attempt: Int?
        var follow = false
        var tail: Int?
        var reconnectTimeout: Duration?

        static let bindings: [OptionBinding<Options>] = [
            .flag(\.stderr, "stderr", help: "Print the job's standard error instead of its standard output."),
            .flag(\.both, "both", help: "Print the standard output, then the standard error (with --follow: both as they grow)."),
            .value(\.attempt, "attempt", "n", kind: .integerIn(1...Int.max),
                   help: "Print this attempt's output, from 1.", default: "the latest"),
            .flag(\.follow, "follow", short: "f", help: "Keep printing new output until the job has finished."),
            .value(\.tail, "tail", "lines", kind: .integerIn(0...Int.max),
                   help: "Start with the last this many lines (a last line without a newline counts).",
                   default: "all the output"),
            .value(\.reconnectTimeout, "reconnect-timeout", "span", kind: .timeSpan, help: Reconnection.optionHelp, default: "1min"),
        ]
    }

    /// The `Logs` call's parameters; options not given are left out.
    static func parameters(_ invocation: Invocation) -> JobsInterface.LogsParameters {
        let options = Options(decoding: invocation)
        return JobsInterface.LogsParameters(
            id: invocation.jobIDs[0], stream: options.stderr ? .stderr : .stdout, tailLines: options.tail,
            follow: options.follow ? true : nil, attempt: options.attempt)
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let options = Options(decoding: invocation)
        if options.both && options.stderr {
            throw CommandLineError(.conflictingOptions, "--both already prints the standard error; give one of --both and --stderr", command: spec.name)
        }
        let parameters = parameters(invocation)
        let follow = parameters.follow == true
        let reconnection = try Reconnection(context: context, invocation: invocation, timeout: options.reconnectTimeout)
        guard options.both else {
            try StreamSession.run(follow: follow, context: context, invocation: invocation) {
                (socket, uid, console) throws(CommandFailure) in
                let written = try stream(parameters, reconnection: reconnection, console: console)
                if written == 0 {
                    explainNothingPrinted(parameters, lookAtStandardError: parameters.stream == .stdout, socket: socket, uid: uid, console: console)
                }
            }
            return .success
        }
        let headers = context.console.outputIsTerminal
        try StreamSession.run(follow: follow, context: context, invocation: invocation) {
            (socket, uid, console) throws(CommandFailure) in
            var written = 0
            if follow {
                written = try followBoth(parameters, reconnection: reconnection, console: console, headers: headers)
            } else {
                let output = InterleavedOutput(console: console, headers: headers)
                for stream in [JobsInterface.LogStream.stdout, .stderr] {
                    var streamParameters = parameters
                    streamParameters.stream = stream
                    // The header once orchd has answered: an error (no such job) comes alone.
                    written += try Self.stream(
                        streamParameters, reconnection: reconnection, console: console,
                        answered: { output.begin(stream) }, write: { output.write($0, from: stream) })
                }
            }
            if written == 0 {
                explainNothingPrinted(parameters, lookAtStandardError: false, socket: socket, uid: uid, console: console)
            }
        }
        return .success
    }

    /// Writes each chunk as it arrives, until orchd ends the stream or nothing reads the
    /// output any more (`EPIPE`, a normal end). When orchd restarts meanwhile, `reconnection`
    /// connects again and the stream resumes at the byte offset written so far, in the attempt
    /// it was written from, so nothing is written twice or skipped.
    /// - Parameters:
    ///   - answered: runs once, at orchd's first reply (before any chunk is written).
    ///   - reached: runs after each reply's chunk was written, with the byte offset the stream
    ///     reached and the attempt it is of.
    ///   - write: writes a chunk; returns 0 or the errno of the failed write.
    /// - Returns: how many bytes were written.
    /// - Throws: ``CommandFailure`` when orchd cannot be reached or fails, sends data that is
    ///   not base64, or the output cannot be written for another reason (a full disk).
    @discardableResult
    static func stream(
        _ parameters: JobsInterface.LogsParameters, reconnection: Reconnection, console: Console,
        answered: (() -> Void)? = nil, reached: ((_ offset: Int64, _ attempt: Int?) -> Void)? = nil,
        write: (([UInt8]) -> Int32)? = nil
    ) throws(CommandFailure) -> Int {
        var parameters = parameters
        var written = 0
        var answered = answered
        try reconnection.run { (connection) throws(CommandFailure) in
            try connection.streamWhile(JobsInterface.logs, parameters) {
                (reply) throws(CommandFailure) -> Bool in
                answered?()
                answered = nil
                guard let data = Data(base64Encoded: reply.data) else {
                    throw CommandFailure("orchd sent log data that is not base64")
                }
                if data.isEmpty { return true }
                switch (write ?? console.writeOutputChecked)(Array(data)) {
                case 0:
                    written += data.count
                    reached?(reply.offset, reply.attempt)
                    // Where a resumed stream starts: just past what was written, in the
                    // attempt it was written from (a retry meanwhile must not move it).
                    parameters.offset = reply.offset
                    parameters.tailLines = nil
                    if parameters.attempt == nil, let attempt = reply.attempt { parameters.fromAttempt = attempt }
                    return true
                case EPIPE: return false
                case let code: throw CommandFailure("cannot write to standard output: \(String(cString: strerror(code)))")
                }
            }
        }
        return written
    }

    /// Follows both streams at once, each on a connection of its own, until both end. The
    /// standard error's output waits until the standard output's has reached the size its
    /// file had when the follow began (asked for first), so what both files held already comes
    /// out as without `--follow`, the standard output first; after that each piece is written
    /// as it arrives.
    /// - Returns: how many bytes were written, of both.
    private static func followBoth(
        _ parameters: JobsInterface.LogsParameters, reconnection: Reconnection, console: Console, headers: Bool
    ) throws(CommandFailure) -> Int {
        let output = InterleavedOutput(console: console, headers: headers)
        let standardOutputCaughtUp = OneTimeGate()
        // Unknown (no such job, not started, orchd unreachable): nothing to wait for; the
        // streams themselves say what is wrong.
        var held: (offset: Int64, attempt: Int?) = (0, nil)
        do throws(CommandFailure) {
            held = try end(of: .stdout, parameters, on: OrchdConnection(socket: reconnection.socket, uid: reconnection.uid))
        } catch {}
        if held.offset == 0 { standardOutputCaughtUp.open() }
        let caughtUp: @Sendable (Int64, Int?) -> Void = { [held] offset, attempt in
            // Another attempt's output (a retry meanwhile) starts over: what was held is out.
            if offset >= held.offset || attempt != held.attempt { standardOutputCaughtUp.open() }
        }
        let failures = Mutex<[CommandFailure]>([])
        let written = Mutex(0)
        // Both connections go when orchd restarts: that is said once.
        var sharing = reconnection
        sharing.notices = Reconnection.OutageNotices()
        let reconnection = sharing
        let group = DispatchGroup()
        for stream in [JobsInterface.LogStream.stdout, .stderr] {
            var streamParameters = parameters
            streamParameters.stream = stream
            let fixed = streamParameters
            let reached: (@Sendable (Int64, Int?) -> Void)? = stream == .stdout ? caughtUp : nil
            let write: @Sendable ([UInt8]) -> Int32 = { bytes in
                if stream == .stderr { standardOutputCaughtUp.wait() }
                return output.write(bytes, from: stream)
            }
            group.enter()
            BlockingThread.start {
                do throws(CommandFailure) {
                    let count = try Self.stream(
                        fixed, reconnection: reconnection, console: console,
                        reached: reached, write: write)
                    written.withLock { $0 += count }
                } catch {
                    failures.withLock { $0.append(error) }
                }
                // However the standard output's stream ended, the standard error's goes on.
                if stream == .stdout { standardOutputCaughtUp.open() }
                group.leave()
            }
        }
        group.wait()
        if let failure = failures.withLock({ $0.first }) { throw failure }
        return written.withLock { $0 }
    }

    /// Where `stream` of the job (and attempt) `parameters` name ends now, and which attempt
    /// that is: one call that asks for no line of it.
    /// - Returns: the stream's size in bytes and its attempt.
    /// - Throws: ``CommandFailure`` when orchd cannot be reached or refuses (no such job).
    private static func end(
        of stream: JobsInterface.LogStream, _ parameters: JobsInterface.LogsParameters, on connection: OrchdConnection
    ) throws(CommandFailure) -> (offset: Int64, attempt: Int?) {
        var probe = JobsInterface.LogsParameters(id: parameters.id, stream: stream, tailLines: 0, attempt: parameters.attempt)
        probe.follow = nil
        var end: (offset: Int64, attempt: Int?) = (0, nil)
        try connection.stream(JobsInterface.logs, probe) { reply in
            if reply.offset >= end.offset { end = (reply.offset, reply.attempt) }
        }
        return end
    }

    /// After a `logs` that printed nothing, one line on standard error saying why, so that the
    /// silence is not taken for an empty log: the job never ran (waiting, queued, or finished
    /// before a process ran), or, after an empty standard output, the attempt wrote to its
    /// standard error instead (a failed job's message is not missed). Quiet when that cannot be
    /// told, and after `--tail 0`, which asked for nothing.
    /// - Parameter lookAtStandardError: whether only the standard output was printed, so the
    ///   standard error's size is worth a hint.
    private static func explainNothingPrinted(
        _ parameters: JobsInterface.LogsParameters, lookAtStandardError: Bool, socket: String, uid: UInt32, console: Console
    ) {
        guard parameters.tailLines != 0 else { return }
        var size: Int64 = 0
        var job: Job?
        do throws(CommandFailure) {
            let connection = try OrchdConnection(socket: socket, uid: uid)
            if lookAtStandardError { size = try end(of: .stderr, parameters, on: connection).offset }
            if size == 0 && parameters.attempt == nil {
                job = try connection.call(JobsInterface.get, JobsInterface.GetParameters(id: parameters.id)).job
            }
        } catch {
            return
        }
        if let job {
            let why: String? = switch job.state.result {
            case .spawnFailed(let reason)?: "never ran, so it has no output: it could not be started (\(reason))"
            case let result? where job.attempt == 0: "never ran, so it has no output: it finished \(result.name) without running"
            case nil where job.attempt == 0: "has not started, so it has no output yet: it is \(job.state.name)"
            default: nil
            }
            if let why {
                console.printError("orchctl: job \(parameters.id) \(why)")
                return
            }
        }
        guard size > 0 else { return }
        let attempt = parameters.attempt.map { " --attempt \($0)" } ?? ""
        console.printError(
            "orchctl: job \(parameters.id) wrote nothing to standard output but \(size) bytes to standard error; see 'orchctl logs --stderr\(attempt) \(parameters.id)'")
    }

    /// A gate that opens once and stays open: `wait` returns at once after `open`.
    final class OneTimeGate: Sendable {
        private let isOpen = Mutex(false)
        private let opened = DispatchGroup()

        init() { opened.enter() }

        func open() {
            let first = isOpen.withLock { open in
                defer { open = true }
                return !open
            }
            if first { opened.leave() }
        }

        func wait() { opened.wait() }
    }

    /// Output written from two streams: on a terminal under a header each time the stream
    /// changes (`==> stderr <==`), plain otherwise. Writes are whole chunks, one at a time.
    final class InterleavedOutput: Sendable {
        private let console: Console
        private let headers: Bool
        /// The stream written last, and whether its output so far ends with a newline.
        private let last = Mutex<(stream: JobsInterface.LogStream?, endsLine: Bool)>((nil, true))

        init(console: Console, headers: Bool) {
            self.console = console
            self.headers = headers
        }

        /// Writes the header of `stream` now, even before it has output (`--both` without
        /// `--follow` shows both headers).
        func begin(_ stream: JobsInterface.LogStream) {
            _ = last.withLock { last in header(for: stream, &last) }
        }

        /// Writes a chunk of `stream`, under its header when another stream was written last.
        /// - Returns: 0, or the errno of the failed write.
        func write(_ bytes: [UInt8], from stream: JobsInterface.LogStream) -> Int32 {
            last.withLock { last in
                if last.stream != stream {
                    let code = header(for: stream, &last)
                    if code != 0 { return code }
                }
                if let final = bytes.last { last.endsLine = final == UInt8(ascii: "\n") }
                return console.writeOutputChecked(bytes)
            }
        }

        private func header(for stream: JobsInterface.LogStream, _ last: inout (stream: JobsInterface.LogStream?, endsLine: Bool)) -> Int32 {
            defer { last.stream = stream }
            guard headers, last.stream != stream else { return 0 }
            var text = last.endsLine ? "" : "\n"
            if last.stream != nil { text += "\n" }
            text += "==> \(stream.rawValue) <==\n"
            last.endsLine = true
            return console.writeOutputChecked(Array(text.utf8))
        }
    }
}
