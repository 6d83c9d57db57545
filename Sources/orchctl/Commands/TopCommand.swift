import CommandLineParsing
import Dispatch
import FoundationEssentials
import OrchestratorAPI
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `orchctl top [--once]`: a live full-screen view of orchd (``TopFrame``), redrawn when an
/// event arrives (`io.orchd.Jobs.Subscribe`, not polling), when the terminal is resized
/// (SIGWINCH), and each second for the elapsed times; `q` or Ctrl-C quits and restores the
/// terminal. `--once` prints one frame and exits.
enum TopCommand: OrchctlCommand {
    static let name = "top"
    static let spec = CommandSpec(
        name: name,
        abstract: "Show a live view of queues, running jobs and recent ends.",
        discussion: """
            Shows each queue's running, queued and waiting jobs and how many ended in the last minute, the running jobs with their elapsed time and the last line of their output, and the jobs that ended last. The view is redrawn as orchd reports events, when the terminal is resized, and each second for the elapsed times; q or Ctrl-C quits and restores the terminal.

            With --once, or when standard output is not a terminal, prints one frame and exits (for scripts and tests); it fits $COLUMNS or the terminal's width on a terminal only.
            """,
        usage: "top [--once] [--color <when>]",
        arguments: [],
        options: Options.specs,
        withoutJSON: "top draws a frame for people; for machine-readable state use 'orchctl status --json', 'orchctl queues --json' or 'orchctl events --follow'")

    /// `top`'s options.
    struct Options: CommandOptions {
        var once = false
        var color = ColorMode.auto.rawValue

        static let bindings: [OptionBinding<Options>] = [
            .flag(\.once, "once", help: "Print one frame and exit."),
            .value(\.color, "color", "when", kind: .choice(ColorMode.names), help: ColorMode.optionHelp, default: "auto"),
        ]
    }

    /// How many running jobs get their last line of output read, per frame.
    static let lastOutputLimit = 50

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let options = Options(decoding: invocation)
        let socket = try context.socket(for: invocation)
        let uid = context.uid
        let colors = context.colors(ColorMode(rawValue: options.color) ?? .auto)
        let snapshot = try Self.snapshot(socket: socket, uid: uid)
        guard !options.once, context.console.outputIsTerminal, isatty(0) == 1 else {
            let frame = TopFrame(time: context.time, width: context.tableWidth, colors: colors)
            context.console.write(frame.render(snapshot, now: Date()))
            return .success
        }
        let session = LiveSession(
            context: context, reconnection: try Reconnection(context: context, invocation: invocation, timeout: nil),
            colors: colors, first: snapshot)
        try session.run()
        return .success
    }

    /// Reads queues, running jobs (with their last line of output) and recent ends from orchd.
    static func snapshot(socket: String, uid: UInt32) throws(CommandFailure) -> TopFrame.Snapshot {
        let connection = try OrchdConnection(socket: socket, uid: uid)
        let info = try connection.call(ManagerInterface.getInfo, VarlinkNoParameters())
        let queues = try connection.call(QueuesInterface.list, QueuesInterface.NamesParameters(names: nil)).queues
        var running: [Job] = []
        try connection.stream(JobsInterface.list, JobsInterface.ListParameters(state: JobState.running.name)) { (reply) throws(CommandFailure) in
            running += reply.jobs
        }
        var recent: [Job] = []
        try connection.stream(JobsInterface.list, JobsInterface.ListParameters(state: "finished", limit: 200)) { (reply) throws(CommandFailure) in
            recent += reply.jobs
        }
        recent.sort { ($0.finishedAt ?? .distantPast, $0.id) < ($1.finishedAt ?? .distantPast, $1.id) }
        var lastOutput: [JobID: String] = [:]
        for job in running.prefix(lastOutputLimit) {
            var bytes: [UInt8] = []
            do throws(CommandFailure) {
                try connection.stream(JobsInterface.logs, JobsInterface.LogsParameters(id: job.id, stream: .stdout, tailLines: 1)) {
                    (reply) throws(CommandFailure) in
                    bytes += Array(Data(base64Encoded: reply.data) ?? Data())
                }
            } catch where !error.isConnectionLoss {
                continue  // a job that just ended and was pruned, or a log removed: no line
            }
            let text = String(decoding: bytes, as: UTF8.self)
            lastOutput[job.id] = String(text.split(separator: "\n", omittingEmptySubsequences: true).last ?? "")
        }
        return TopFrame.Snapshot(version: info.version, totals: info.jobs, queues: queues, running: running, lastOutput: lastOutput, recent: recent)
    }

    /// The full-screen view: the terminal in raw mode on the alternate screen, a frame drawn
    /// on each event, resize and second, until q, Ctrl-C, SIGTERM, or a failure.
    final class LiveSession: Sendable {
        private let context: CommandContext
        private let reconnection: Reconnection
        private let colors: Bool
        private let queue = DispatchQueue(label: "orchctl.top")
        /// The latest snapshot, whether one is being read, and whether another was asked for
        /// meanwhile (events come in bursts: one read answers them all).
        private let state: Mutex<(snapshot: TopFrame.Snapshot, reading: Bool, stale: Bool)>
        private let ended = DispatchSemaphore(value: 0)
        private let failure = Mutex<CommandFailure?>(nil)
        /// Set on the session's queue once the view ends: a draw still queued then (a
        /// snapshot read for an event as `q` came) must not draw over the restored screen.
        private let closed = Mutex(false)

        init(context: CommandContext, reconnection: Reconnection, colors: Bool, first: TopFrame.Snapshot) {
            self.context = context
            self.reconnection = reconnection
            self.colors = colors
            state = Mutex((first, false, false))
        }

        func run() throws(CommandFailure) {
            var saved = termios()
            let raw = tcgetattr(0, &saved) == 0
            if raw {
                var settings = saved
                cfmakeraw(&settings)
                // Output processing stays on, so "\n" still starts a line.
                settings.c_oflag = saved.c_oflag
                tcsetattr(0, TCSANOW, &settings)
            }
            context.console.write("\u{1B}[?1049h\u{1B}[?25l")
            defer {
                context.console.write("\u{1B}[?25h\u{1B}[?1049l")
                if raw { tcsetattr(0, TCSANOW, &saved) }
            }

            signal(SIGWINCH, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
            signal(SIGINT, SIG_IGN)
            signal(SIGPIPE, SIG_IGN)
            var sources: [any DispatchSourceProtocol] = []
            for number in [SIGTERM, SIGINT, SIGHUP] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { [self] in ended.signal() }
                sources.append(source)
            }
            let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: queue)
            resize.setEventHandler { [self] in draw() }
            sources.append(resize)
            let keys = DispatchSource.makeReadSource(fileDescriptor: 0, queue: queue)
            keys.setEventHandler { [self] in
                var byte: UInt8 = 0
                let count = read(0, &byte, 1)
                // q, Q, Ctrl-C (raw mode delivers it as a byte), Ctrl-D, or the input closing.
                if count <= 0 || byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") || byte == 3 || byte == 4 { ended.signal() }
            }
            sources.append(keys)
            let tick = DispatchSource.makeTimerSource(queue: queue)
            tick.schedule(deadline: .now() + 1, repeating: 1)
            tick.setEventHandler { [self] in draw() }
            sources.append(tick)
            for source in sources { source.resume() }
            defer { for source in sources { source.cancel() } }

            queue.async { [self] in draw() }
            BlockingThread.start { [self] in follow() }
            ended.wait()
            // Every draw runs on the queue: after this one, none draws again.
            queue.sync { closed.withLock { $0 = true } }
            if let failure = failure.withLock({ $0 }) { throw failure }
        }

        /// Follows the event stream (reconnecting after a restart of orchd) and reads a new
        /// snapshot for each event.
        private func follow() {
            var parameters = JobsInterface.SubscribeParameters(follow: true)
            let console = Console(writeOutput: { _ in }, writeError: { _ in }, outputIsTerminal: false, terminalColumns: nil)
            var quiet = reconnection
            quiet.console = console  // the screen is not the place for the reconnect line
            do throws(CommandFailure) {
                // The retained events come first; each burst of them costs one snapshot read.
                try quiet.run { (connection) throws(CommandFailure) in
                    try connection.stream(JobsInterface.subscribe, parameters) { (reply) throws(CommandFailure) in
                        if let event = reply.event {
                            parameters.since = event.seq
                            refresh()
                        }
                    }
                }
            } catch {
                failure.withLock { $0 = error }
            }
            ended.signal()
        }

        /// Reads a snapshot on the session's queue and draws it; while one is being read,
        /// notes that another is needed.
        private func refresh() {
            let start = state.withLock { state -> Bool in
                if state.reading {
                    state.stale = true
                    return false
                }
                state.reading = true
                return true
            }
            guard start else { return }
            BlockingThread.start { [self] in
                while true {
                    let fresh = try? TopCommand.snapshot(socket: reconnection.socket, uid: reconnection.uid)
                    let again = state.withLock { state -> Bool in
                        if let fresh { state.snapshot = fresh }
                        if state.stale {
                            state.stale = false
                            return true
                        }
                        state.reading = false
                        return false
                    }
                    queue.async { [self] in draw() }
                    if !again { break }
                }
            }
        }

        /// Draws the latest snapshot to fit the terminal's current size.
        private func draw() {
            guard !closed.withLock({ $0 }) else { return }
            var size = winsize()
            let measured = ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0
            let frame = TopFrame(
                time: context.time, width: measured ? Int(size.ws_col) : context.tableWidth,
                height: measured && size.ws_row > 0 ? Int(size.ws_row) - 1 : nil, colors: colors)
            let lines = frame.lines(state.withLock { $0.snapshot }, now: Date())
            context.console.write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K\r\n" }.joined() + "\u{1B}[J")
        }
    }
}
