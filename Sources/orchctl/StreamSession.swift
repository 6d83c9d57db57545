import CommandLineParsing
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command that streams to standard output (`events --follow`) until it ends by itself,
/// or until the user interrupts it (SIGINT) or the reader of its output goes away (the pipe's
/// reader exits, as with `orchctl events --follow | head -3`). The last two are how such a
/// stream is meant to end, so they end it quietly, as a success.
///
/// The stream blocks in read(2) on orchd's socket for as long as no event comes, so it runs on
/// another thread while this one waits for the first of the three endings. SIGINT is taken by
/// a thread waiting in sigwait(3), not in a handler; SIGPIPE is ignored so a write to a closed
/// pipe fails with `EPIPE` instead of killing the process. On an early end the stream's
/// thread is left blocked and ends with the process.
enum StreamSession {
    /// Runs a stream against the invocation's socket: as a session (see above) when it
    /// follows new data and standard output can be watched, else plainly to its end.
    /// - Parameters:
    ///   - follow: whether the stream goes on until interrupted.
    ///   - stream: connects and streams, writing to the console.
    static func run(
        follow: Bool, context: CommandContext, invocation: Invocation,
        _ stream: @escaping @Sendable (_ socket: String, _ uid: UInt32, _ console: Console) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        let socket = try context.socket(for: invocation)
        let uid = context.uid
        let console = context.console
        let body: @Sendable () throws(CommandFailure) -> Void = { () throws(CommandFailure) in
            try stream(socket, uid, console)
        }
        if follow, let output = console.outputDescriptor {
            try run(watching: output, body)
        } else {
            try body()
        }
    }

    /// Runs `body` to its end, to SIGINT, or until nothing reads `outputDescriptor` any more.
    /// - Parameters:
    ///   - outputDescriptor: the descriptor to watch (standard output, 1).
    ///   - body: the stream.
    /// - Throws: what `body` throws, when it ends first.
    static func run(
        watching outputDescriptor: Int32, _ body: @escaping @Sendable () throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let ending = Ending()

        // SIGINT is taken with sigwait(3), not through a dispatch source, which handed it over
        // half a second late: blocked here (dispatch's own threads block it already), it stays
        // pending, ignored disposition or not, until the waiting thread takes it.
        var interrupt = interruptSet()
        pthread_sigmask(SIG_BLOCK, &interrupt, nil)
        BlockingThread.start {
            var interrupt = interruptSet()
            var number: Int32 = 0
            if sigwait(&interrupt, &number) == 0 { ending.finish(.success(())) }
        }

        BlockingThread.start {
            if waitForReaderToGo(outputDescriptor) { ending.finish(.success(())) }
        }
        BlockingThread.start {
            ending.finish(Result { () throws(CommandFailure) in try body() })
        }
        try ending.wait().get()
    }

    /// The set holding SIGINT alone.
    private static func interruptSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        return set
    }

    /// Blocks until `fd` reports an error or hang-up: for the write end of a pipe, that its
    /// last reader has closed it (poll(2) with no requested events still reports `POLLERR`
    /// and `POLLHUP`). A regular file or `/dev/null` never reports either.
    /// - Returns: `true` when the reader went away, `false` when `fd` cannot be watched.
    private static func waitForReaderToGo(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: 0, revents: 0)
        while true {
            let n = poll(&entry, 1, -1)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if entry.revents & Int16(POLLNVAL) != 0 { return false }
            if entry.revents & Int16(POLLERR | POLLHUP) != 0 { return true }
        }
    }

    /// The first ending to arrive, and a way to wait for it.
    private final class Ending: Sendable {
        private let result = Mutex<Result<Void, CommandFailure>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        /// Records `outcome` unless another ending came first.
        func finish(_ outcome: Result<Void, CommandFailure>) {
            let first = result.withLock { current in
                guard current == nil else { return false }
                current = outcome
                return true
            }
            if first { done.signal() }
        }

        /// Waits for the first ending.
        func wait() -> Result<Void, CommandFailure> {
            done.wait()
            return result.withLock { $0 } ?? .success(())
        }
    }
}
