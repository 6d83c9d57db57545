import Dispatch
import Synchronization

/// A note on standard error, printed once if a blocking call is still waiting after a delay,
/// so that a long wait is not taken for a hang; never printed when the call returns first.
///
/// ```swift
/// let reply = try DelayedNote.during("orchctl: waiting for ...", on: console, after: .seconds(1)) {
///     try connection.call(...)
/// }
/// ```
final class DelayedNote: Sendable {
    /// Whether the call is over; the note checks it under the lock it prints under, so the
    /// note never comes after ``finish()`` has returned.
    private let finished = Mutex(false)

    /// Schedules the note.
    /// - Parameters:
    ///   - delay: how long the call may take before the note is printed.
    ///   - console: where the note goes (standard error).
    ///   - text: the note, one line.
    private init(after delay: Duration, on console: Console, _ text: String) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            self.finished.withLock { done in
                // Not while orchd has refused the call and it is being made again: it is not
                // in progress, and the retry says so itself.
                if !done && !OrchdConnection.isRetryingRefusedCall { console.printError(text) }
            }
        }
    }

    /// Marks the call over: the note is not printed after this returns.
    private func finish() {
        finished.withLock { $0 = true }
    }

    /// Runs `body`, a blocking call, with `text` printed on `console` if it is still running
    /// after `delay`; never after it has returned or thrown.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    static func during<Value, Failure: Error>(
        _ text: String, on console: Console, after delay: Duration, _ body: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let note = DelayedNote(after: delay, on: console, text)
        defer { note.finish() }
        return try body()
    }
}
