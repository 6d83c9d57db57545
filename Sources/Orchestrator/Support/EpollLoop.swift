import CPosix
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Tells when file descriptors are ready, with one epoll(7) instance and one thread for the
/// whole process, and runs each descriptor's handler on the queue its owner chose.
///
/// orchd watches every descriptor it reads or writes as events arrive (client sockets, pidfds,
/// inotify fds, the listening socket) here rather than with dispatch read and write sources:
/// libdispatch's epoll back end on Linux corrupts its own bookkeeping when sources on
/// descriptors are created and cancelled at a high rate, and its event thread then crashes
/// (a freed "muxnote" reached again). A daemon that serves many short `orchctl` calls and
/// reaps many short jobs does exactly that; a program that only churns read sources on
/// socket pairs crashes within seconds on this toolchain (`docs/ARCHITECTURE.md`, "Watching
/// descriptors").
///
/// Each ``Watch`` is armed one-shot (`EPOLLONESHOT`): when its descriptor is ready the kernel
/// disarms it, the handler runs on the watch's queue, and the watch is armed again after the
/// handler returned. So one watch's handler never runs twice at once, and a descriptor that
/// stays ready does not flood its queue. Handlers must accept a call with nothing to do (a
/// read that returns `EAGAIN`): readiness is a hint, as with dispatch sources.
///
/// A descriptor epoll refuses (epoll_ctl(2): `EPERM` for a regular file, `ENOSPC` past
/// `fs.epoll.max_user_watches`, `ENOMEM`) is polled every ``pollInterval`` instead, so no
/// child goes unreaped and no client unread for want of a watch.
public final class EpollLoop: Sendable {
    /// The events a watch waits for and a handler is told about (epoll_ctl(2)).
    public struct Events: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Data to read, a connection to accept, a process that exited (a pidfd).
        public static let readable = Events(rawValue: UInt32(EPOLLIN.rawValue))
        /// Room to write.
        public static let writable = Events(rawValue: UInt32(EPOLLOUT.rawValue))
        /// An error on the descriptor; always reported, never asked for.
        public static let error = Events(rawValue: UInt32(EPOLLERR.rawValue))
        /// The peer hung up; always reported, never asked for.
        public static let hangUp = Events(rawValue: UInt32(EPOLLHUP.rawValue))
    }

    /// How often a descriptor that epoll refused is polled.
    static let pollInterval = DispatchTimeInterval.milliseconds(100)

    /// The loop every part of the process shares: its thread starts on first use.
    public static let shared = EpollLoop()

    private let epollFD: Int32
    /// The armed watches by their number (an epoll event's data). Numbers, not descriptors,
    /// name watches: a descriptor number is reused as soon as it is closed.
    private let watches = Mutex<[UInt64: Watch]>([:])
    private let nextNumber = Atomic<UInt64>(1)
    /// The loop's thread (`pthread_self()` there), once it runs.
    private let loopThread = Atomic<UInt>(0)

    /// Whether the caller runs on the loop's own thread, as the handler of a watch without a
    /// queue does.
    var isLoopThread: Bool { loopThread.load(ordering: .acquiring) == UInt(pthread_self()) }

    private init() {
        epollFD = cposix_epoll_create()
        guard epollFD >= 0 else {
            // Only at start-up, out of descriptors or memory: every watch is then polled.
            DaemonLog.error("cannot create an epoll instance: \(String(cString: strerror(errno))); polling descriptors instead")
            return
        }
        let thread = Thread { [self] in run() }
        thread.name = "orchd.epoll"
        thread.start()
    }

    /// Starts watching `fd` for `interest` and calls `handler` on `queue` each time it is ready.
    ///
    /// - Parameters:
    ///   - fd: the descriptor; the caller keeps it open until ``Watch/cancel(then:)`` has run
    ///     its closure, and closes it there.
    ///   - interest: the events to wait for (error and hang-up are always reported).
    ///   - queue: where `handler` and the cancellation's closure run; `nil`: `handler` runs on
    ///     the loop's own thread, for a handler that only reads its descriptor and never
    ///     blocks (it saves a thread's wake-up per event; every other watch waits meanwhile),
    ///     and the cancellation's closure on the thread that cancels, or after the call under
    ///     way.
    ///   - handler: called with the watch and the events that were ready; never twice at
    ///     once, and no call begins once the watch is cancelled.
    /// - Returns: the watch, kept alive by the loop until it is cancelled.
    public func watch(
        _ fd: Int32, for interest: Events, on queue: DispatchQueue?,
        handler: @escaping @Sendable (Watch, Events) -> Void
    ) -> Watch {
        let number = nextNumber.wrappingAdd(1, ordering: .relaxed).oldValue
        let watch = Watch(fd: fd, number: number, interest: interest, queue: queue, handler: handler, loop: self)
        watches.withLock { $0[number] = watch }
        watch.start()
        return watch
    }

    /// Waits for events for ever and hands each to its watch.
    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        let capacity: Int32 = 64
        var events = [UInt32](repeating: 0, count: Int(capacity))
        var numbers = [UInt64](repeating: 0, count: Int(capacity))
        while true {
            let count = cposix_epoll_wait(epollFD, &events, &numbers, capacity, -1)
            if count < 0 {
                if errno == EINTR { continue }
                // EBADF/EINVAL cannot happen to a descriptor only this loop owns.
                DaemonLog.error("epoll_wait failed: \(String(cString: strerror(errno)))")
                continue
            }
            for index in 0..<Int(count) {
                // A watch cancelled meanwhile is gone from the table, or marked cancelled.
                watches.withLock { $0[numbers[index]] }?.ready(Events(rawValue: events[index]))
            }
        }
    }

    /// epoll_ctl(2) for `watch`. Returns 0, or the errno.
    fileprivate func control(_ operation: Int32, _ watch: Watch, events: Events) -> Int32 {
        guard epollFD >= 0 else { return EBADF }
        let mask = operation == EPOLL_CTL_DEL ? 0 : events.rawValue | UInt32(EPOLLONESHOT.rawValue)
        return cposix_epoll_ctl(epollFD, operation, watch.fd, mask, watch.number) == 0 ? 0 : errno
    }

    fileprivate func forget(_ watch: Watch) {
        _ = watches.withLock { $0.removeValue(forKey: watch.number) }
    }

    /// One descriptor's watch: its interest, its handler and whether the kernel will report it.
    public final class Watch: Sendable {
        fileprivate let fd: Int32
        fileprivate let number: UInt64
        /// `nil`: the loop's own thread.
        private let queue: DispatchQueue?
        private let loop: EpollLoop  // the shared loop, never freed
        private let state: Mutex<State>

        private struct State {
            var interest: EpollLoop.Events
            var handler: (@Sendable (Watch, EpollLoop.Events) -> Void)?
            /// The kernel will report the next readiness (armed one-shot).
            var isArmed = false
            /// A call of the handler is queued or running; it re-arms the watch when it returns.
            var isFiring = false
            var isCancelled = false
            /// What runs once the call under way returns, for a cancel made during it.
            var onCancelled: (@Sendable () -> Void)?
            /// Set when epoll refused the descriptor: a timer calls the handler instead.
            var pollTimer: (any DispatchSourceTimer)?
        }

        fileprivate init(
            fd: Int32, number: UInt64, interest: EpollLoop.Events, queue: DispatchQueue?,
            handler: @escaping @Sendable (Watch, EpollLoop.Events) -> Void, loop: EpollLoop
        ) {
            self.fd = fd
            self.number = number
            self.queue = queue
            self.loop = loop
            self.state = Mutex(State(interest: interest, handler: handler))
        }

        fileprivate func start() {
            state.withLock { state in
                let code = loop.control(EPOLL_CTL_ADD, self, events: state.interest)
                if code == 0 {
                    state.isArmed = true
                } else {
                    poll(&state, because: code)
                }
            }
        }

        /// Changes the events the watch waits for (say, adds ``Events/writable`` while replies
        /// wait for room). Takes effect at once, or when the running handler returns.
        public func setInterest(_ interest: EpollLoop.Events) {
            state.withLock { state in
                state.interest = interest
                guard !state.isCancelled, state.pollTimer == nil, !state.isFiring else { return }
                arm(&state)
            }
        }

        /// Stops the watch: once it returns, no call of the handler begins (one already begun
        /// may still be running), and `onCancelled` runs on the watch's queue after that call
        /// returned, so it may close the descriptor, whatever the queue (serial or concurrent)
        /// and whichever thread cancels. Calling it again does nothing.
        public func cancel(then onCancelled: (@Sendable () -> Void)? = nil) {
            let runNow = state.withLock { state -> Bool? in
                guard !state.isCancelled else { return nil }
                state.isCancelled = true
                state.handler = nil
                state.pollTimer?.cancel()
                state.pollTimer = nil
                // Also after a fall-back to polling: a descriptor still registered stays disarmed.
                _ = loop.control(EPOLL_CTL_DEL, self, events: [])
                guard state.isFiring else { return true }
                state.onCancelled = onCancelled
                return false
            }
            guard let runNow else { return }
            loop.forget(self)
            guard runNow, let onCancelled else { return }
            if let queue { queue.async(execute: onCancelled) } else { onCancelled() }
        }

        /// Called on the loop's thread: the kernel reported `events` and disarmed the watch.
        fileprivate func ready(_ events: EpollLoop.Events) {
            let handOver = state.withLock { state -> Bool in
                state.isArmed = false
                // A report while a call is queued (the watch was re-armed meanwhile by an
                // interest change) adds nothing: that call re-arms when it returns.
                guard !state.isCancelled, !state.isFiring else { return false }
                state.isFiring = true
                return true
            }
            guard handOver else { return }
            if let queue { queue.async { self.fire(events) } } else { fire(events) }
        }

        /// Runs the handler on the queue, then arms the watch again, or, cancelled meanwhile,
        /// runs what the cancel left to run after it.
        private func fire(_ events: EpollLoop.Events) {
            if let handler = state.withLock({ $0.handler }) { handler(self, events) }
            let onCancelled = state.withLock { state -> (@Sendable () -> Void)? in
                state.isFiring = false
                guard !state.isCancelled else {
                    defer { state.onCancelled = nil }
                    return state.onCancelled
                }
                if state.pollTimer == nil { arm(&state) }
                return nil
            }
            onCancelled?()
        }

        private func arm(_ state: inout State) {
            let code = loop.control(EPOLL_CTL_MOD, self, events: state.interest)
            if code == 0 {
                state.isArmed = true
            } else {
                poll(&state, because: code)
            }
        }

        /// Falls back to calling the handler every ``EpollLoop/pollInterval``.
        private func poll(_ state: inout State, because code: Int32) {
            state.isArmed = false
            if code != EPERM {
                DaemonLog.warning("cannot watch descriptor \(fd) with epoll: \(String(cString: strerror(code))); polling it every \(EpollLoop.pollInterval)")
            }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + EpollLoop.pollInterval, repeating: EpollLoop.pollInterval)
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                // As a report from the kernel would: one call at a time, and cancels wait for it.
                let interest = self.state.withLock { state -> EpollLoop.Events? in
                    guard !state.isCancelled, !state.isFiring else { return nil }
                    state.isFiring = true
                    return state.interest
                }
                if let interest { self.fire(interest) }
            }
            state.pollTimer = timer
            timer.activate()
        }
    }
}
