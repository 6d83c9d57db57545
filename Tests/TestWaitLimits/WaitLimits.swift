import Dispatch
import Foundation
import Glibc
import Synchronization

// Limits on the tests' waits for other processes and named pipes, shared by the test targets:
// a wait whose event never comes fails its test instead of hanging the whole run (Swift
// Testing runs every test at once on a pool as wide as the CPUs, which one blocked test can
// starve). The limits are safety nets, far above what a wait takes on a loaded machine. A
// limit that runs out throws ``WaitLimitExceeded``, which fails the test: this target does not
// import Testing, which a release build (`swift build -c release`) cannot find.

/// A wait that ran past its limit; thrown, it fails the test that waited.
public struct WaitLimitExceeded: Error, CustomStringConvertible {
    public let description: String
}

/// Where the limits' timers fire. Not a global queue: on Linux those start about as many
/// threads as CPUs and add one for blocked work only after a check once a second, so a timer
/// there could wait behind the very reads it bounds (20 blocked items on 2 CPUs held a 0.5 s
/// timer for 6 s). A serial queue of its own has a thread of its own.
public let limitTimers = DispatchQueue(label: "test.limit-timers")

/// Runs `wait`, which ends once process `pid` has exited (a wait for its exit, or for the end
/// of its output), killing the process with SIGKILL if it still runs after `seconds`. Its
/// process group goes too: Foundation's `Process` starts each child in a group of its own, and
/// what the child started there holds its output and the socket through which `Process` learns
/// of its exit (`waitUntilExit()` returns only once every holder is gone).
/// - Returns: whether the wait ended before the limit (false: the process was killed).
@discardableResult
public func waiting(for pid: pid_t, atMost seconds: Double, _ wait: () throws -> Void) rethrows -> Bool {
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
    public func waitUntilExit(atMost seconds: Double) -> Bool {
        waiting(for: processIdentifier, atMost: seconds) { waitUntilExit() }
    }
}

/// Opens the named pipe `path` for writing, to let a job blocked reading it (`read x < gate`,
/// `cat gate`) go on. open(2) waits until something opens the other end; when nothing has
/// after `timeout` seconds (the job never got there, or died), the read end is opened here to
/// end that wait.
/// - Returns: the descriptor, which the caller writes to and closes.
/// - Throws: ``WaitLimitExceeded`` when nothing opened the pipe for reading in time.
public func openForWriting(fifo path: String, timeout: Double = 300) throws -> Int32 {
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
        throw WaitLimitExceeded(description: "nothing opened \(path) for reading within \(Int(timeout)) s")
    }
    return writer
}

/// Opens the named pipe `path` for writing and closes it at once: a job blocked reading it
/// reads its end and goes on. Waits, and throws, as ``openForWriting(fifo:timeout:)`` does.
public func release(gate path: String, timeout: Double = 300) throws {
    close(try openForWriting(fifo: path, timeout: timeout))
}

/// What writers send through the named pipe `path` until the last one closes it, or `nil`
/// when none has within `timeout` seconds. Opened without blocking (open(2) of a FIFO for
/// reading would wait for a writer for ever); poll(2) reports no hang-up until a writer came.
public func readFIFO(_ path: String, timeout: Double = 300) -> String? {
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    let deadline = Date().addingTimeInterval(timeout)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
        guard deadline.timeIntervalSinceNow > 0 else { return nil }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
        if ready < 0 && errno == EINTR { continue }
        guard ready == 1 else { return nil }
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            bytes += buffer[..<count]
        } else if count == 0 {
            return String(decoding: bytes, as: UTF8.self)
        } else if errno != EAGAIN && errno != EINTR {
            return nil
        }
    }
}

/// Runs `body`, which must not wait on the named pipe `path` that nothing else opens. Should it
/// wait anyway, in an open(2) of one end, after `seconds` both ends are opened and closed
/// here, which lets that open return, and the test fails instead of hanging.
/// - Throws: what `body` throws, or ``WaitLimitExceeded`` when it waited on the pipe.
public func failingIfBlocked<T>(on path: String, after seconds: Double = 300, _ body: () throws -> T) throws -> T {
    let unblocked = Atomic<Bool>(false)
    let limit = DispatchWorkItem {
        // Noted first: the open let go may return before this one does.
        unblocked.store(true, ordering: .relaxed)
        // O_RDWR opens a FIFO at once on Linux, as its reader and its writer.
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        if fd >= 0 { close(fd) }
    }
    limitTimers.asyncAfter(deadline: .now() + seconds, execute: limit)
    let result = Result { try body() }
    limit.cancel()
    if unblocked.load(ordering: .relaxed) {
        throw WaitLimitExceeded(description: "waited \(Int(seconds)) s on the named pipe \(path)")
    }
    return try result.get()
}
