import Foundation
import Glibc
import OrchestratorAPI
import Synchronization
import Testing

// Limits on the tests' waits for processes, named pipes and orchd's replies: a wait whose
// event never comes fails its test instead of hanging the whole run (Swift Testing runs every
// test at once on a pool as wide as the CPUs, which one blocked test can starve).

/// Where the limits' timers fire. Not a global queue: on Linux those start about as many
/// threads as CPUs and add one for blocked work only after a check once a second, so a timer
/// there could wait behind the very reads it bounds (20 blocked items on 2 CPUs held a 0.5 s
/// timer for 6 s). A serial queue of its own has a thread of its own.
let limitTimers = DispatchQueue(label: "test.limit-timers")

/// Runs `wait`, which ends once process `pid` has exited (a wait for its exit, or for the end
/// of its output), killing the process with SIGKILL if it still runs after `seconds`. Its
/// process group goes too: Foundation's `Process` starts each child in a group of its own, and
/// what the child started there holds its output and the socket through which `Process` learns
/// of its exit (`waitUntilExit()` returns only once every holder is gone).
/// - Returns: whether the wait ended before the limit (false: the process was killed).
@discardableResult
func waiting(for pid: pid_t, atMost seconds: TimeInterval, _ wait: () throws -> Void) rethrows -> Bool {
    let killed = Atomic<Bool>(false)
    let limit = DispatchWorkItem {
        killed.store(true, ordering: .relaxed)
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
    }
    limitTimers.asyncAfter(deadline: .now() + seconds, execute: limit)
    defer { limit.cancel() }
    try wait()
    return !killed.load(ordering: .relaxed)
}

extension Process {
    /// Waits for the process to exit, killing it with SIGKILL if it still runs after `seconds`.
    /// - Returns: whether it exited by itself within the limit.
    func waitUntilExit(atMost seconds: TimeInterval) -> Bool {
        waiting(for: processIdentifier, atMost: seconds) { waitUntilExit() }
    }
}

/// Opens the named pipe `path` for writing, to let a job blocked reading it (`read x < gate`,
/// `cat gate`) go on. open(2) waits until something opens the other end; when nothing has
/// after `timeout` seconds (the job never got there, or died), the read end is opened here to
/// end that wait, and the test fails.
/// - Returns: the descriptor, which the caller writes to and closes; -1 when no reader came.
func openForWriting(fifo path: String, timeout: Double = 300, sourceLocation: SourceLocation = #_sourceLocation) -> Int32 {
    let state = Mutex((opened: false, reader: Int32(-1)))
    let limit = DispatchWorkItem {
        state.withLock { state in
            // Non-blocking, this open needs no writer, and it ends the writer's wait.
            if !state.opened { state.reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        }
    }
    limitTimers.asyncAfter(deadline: .now() + timeout, execute: limit)
    let writer = open(path, O_WRONLY | O_CLOEXEC)
    limit.cancel()
    let reader = state.withLock { state in
        state.opened = true
        return state.reader
    }
    guard reader < 0 else {
        close(reader)
        if writer >= 0 { close(writer) }
        Issue.record("nothing opened \(path) for reading within \(Int(timeout)) s", sourceLocation: sourceLocation)
        return -1
    }
    return writer
}

/// Opens the named pipe `path` for writing and closes it at once: a job blocked reading it
/// reads its end and goes on. Waits as ``openForWriting(fifo:timeout:sourceLocation:)`` does.
func release(gate path: String, timeout: Double = 300, sourceLocation: SourceLocation = #_sourceLocation) {
    let writer = openForWriting(fifo: path, timeout: timeout, sourceLocation: sourceLocation)
    if writer >= 0 { close(writer) }
}

extension VarlinkClient {
    /// How long a test's Varlink client waits for orchd to take a call or answer it.
    static let testTimeLimit = 300

    /// Connects as `init(socketPath:)` does, with reads and writes that give up after
    /// ``testTimeLimit`` seconds (`SO_RCVTIMEO`, `SO_SNDTIMEO`): a reply that never comes fails
    /// the call (`connectionLost` with `EAGAIN`) instead of blocking the test for ever.
    static func limited(socketPath: String) throws(VarlinkClientError) -> VarlinkClient {
        let client = try VarlinkClient(socketPath: socketPath)
        var limit = timeval(tv_sec: testTimeLimit, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(client.socketDescriptor, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        return client
    }
}
