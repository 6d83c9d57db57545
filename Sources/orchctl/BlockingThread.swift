import Dispatch
import Glibc

/// Runs work that blocks (a read of a socket that may wait for minutes, `sigwait`, `poll`) on a
/// thread of its own.
///
/// Dispatch's global queues are the wrong place for it on Linux: they start about as many
/// threads as the machine has CPUs, and add one for work that waits only when a check made
/// once a second finds the running ones blocked. `orchctl logs -f --both` gave its two
/// streams and `StreamSession` its three waits to them, and on 2 CPUs the streams' calls
/// went out one to two seconds late and their output came in bursts. A thread started
/// here inherits the caller's signal mask, as `StreamSession` needs for `sigwait`.
enum BlockingThread {
    /// Starts `body` on a new detached thread; on the global queue when no thread can be made.
    static func start(_ body: @escaping @Sendable () -> Void) {
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Work>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, work)
        guard created == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            DispatchQueue.global().async(execute: body)
            return
        }
        pthread_detach(thread)
    }

    /// The closure, boxed to cross into the new thread as one pointer.
    private final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
