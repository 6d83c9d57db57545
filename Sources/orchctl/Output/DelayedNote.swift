import Dispatch
import Synchronization

/// A note on standard error, printed once if a blocking call is still waiting after a delay,
/// so that a long wait is not taken for a hang; never printed when the call returns first.
///
/// ```swift
/// let note = DelayedNote(after: .seconds(1), on: console, "orchctl: waiting for ...")
/// let reply = try connection.call(...)
/// note.finish()  // before printing anything of the reply
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
    init(after delay: Duration, on console: Console, _ text: String) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            self.finished.withLock { done in
                if !done { console.printError(text) }
            }
        }
    }

    /// Marks the call over: the note is not printed after this returns.
    func finish() {
        finished.withLock { $0 = true }
    }
}
