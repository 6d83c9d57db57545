import Synchronization

/// A value shared between threads behind a mutex; used where a callback hands a result to a
/// thread that waits for it.
final class LockedBox<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Runs `body` on the value under the lock: a read and a write that nothing comes between.
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        storage.withLock { body(&$0) }
    }
}
