import Synchronization

/// The multicast delegate (docs/ARCHITECTURE.md, Patterns): forwards each call to many
/// observers, in the order they were added, holding them weakly.
///
/// Observers are called on the notifying queue (the scheduler's control queue), one after
/// the other; an observer with slow work hands it to a queue of its own (``HookRunner``). An
/// observer that was released is skipped and dropped.
public final class ObserverSet<Observer: Sendable>: Sendable {
    private struct Entry: @unchecked Sendable {  // `observer` is a weak reference to a Sendable object
        weak var observer: AnyObject?
    }

    private let entries = Mutex<[Entry]>([])

    /// Creates an empty set.
    public init() {}

    /// Adds an observer; it is called after every observer added before it.
    /// - Parameter observer: held weakly: release it to stop its calls.
    public func add(_ observer: Observer) {
        let entry = Entry(observer: observer as AnyObject)
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

    /// Calls `body` with each live observer in registration order, on the calling queue.
    public func notify(_ body: (Observer) -> Void) {
        let live = entries.withLock { entries in
            entries.removeAll { $0.observer == nil }
            return entries
        }
        for entry in live {
            guard let object = entry.observer, let observer = object as? Observer else { continue }
            body(observer)
        }
    }
}
