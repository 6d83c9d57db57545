import Dispatch
import Synchronization

/// The multicast delegate (docs/ARCHITECTURE.md, Patterns): forwards each call to many
/// observers, in the order they were added, holding them weakly.
///
/// Each observer chose at registration the queue it is called on and whether the caller
/// waits for it (`wait:`). An observer that was released is skipped and dropped.
public final class ObserverSet<Observer: Sendable>: Sendable {
    private struct Entry: @unchecked Sendable {  // `observer` is a weak reference to a Sendable object
        weak var observer: AnyObject?
        let queue: DispatchQueue?
        let wait: Bool
    }

    private let entries = Mutex<[Entry]>([])

    /// Creates an empty set.
    public init() {}

    /// Adds an observer; it is called after every observer added before it.
    /// - Parameters:
    ///   - observer: held weakly: release it to stop its calls.
    ///   - queue: where it is called; `nil` calls it on the notifying queue (the control queue).
    ///   - wait: whether ``notify(_:)`` waits until it has been called (only with a `queue`).
    public func add(_ observer: Observer, queue: DispatchQueue? = nil, wait: Bool = false) {
        let entry = Entry(observer: observer as AnyObject, queue: queue, wait: wait)
        entries.withLock { $0.append(entry) }
    }

    /// Removes an observer (identity comparison).
    public func remove(_ observer: Observer) {
        let target = observer as AnyObject
        entries.withLock { $0.removeAll { $0.observer === target || $0.observer == nil } }
    }

    /// The number of live observers.
    public var count: Int {
        entries.withLock { entries in entries.filter { $0.observer != nil }.count }
    }

    /// Calls `body` with each live observer in registration order, each on its own queue.
    public func notify(_ body: @escaping @Sendable (Observer) -> Void) {
        for entry in liveEntries() {
            guard let object = entry.observer, let observer = object as? Observer else { continue }
            if let queue = entry.queue {
                let call: @Sendable () -> Void = { body(observer) }
                if entry.wait { queue.sync(execute: call) } else { queue.async(execute: call) }
            } else {
                body(observer)
            }
        }
    }

    /// Asks every live observer, in registration order, and returns the last non-`nil`
    /// answer (the last responder's value wins). Answers are taken on the calling
    /// queue, synchronously.
    public func query<Answer>(_ body: (Observer) -> Answer?) -> Answer? {
        var answer: Answer?
        for entry in liveEntries() {
            guard let object = entry.observer, let observer = object as? Observer else { continue }
            if let value = body(observer) { answer = value }
        }
        return answer
    }

    private func liveEntries() -> [Entry] {
        entries.withLock { entries in
            entries.removeAll { $0.observer == nil }
            return entries
        }
    }
}
