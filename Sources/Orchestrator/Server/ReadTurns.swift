import Synchronization

/// Lets at most ``width`` reads of the job table wait for, or run on, the control queue at
/// once, taking waiting users in turn.
///
/// A listing of many jobs is read a page per turn of the control queue (`ListHandler`), but
/// every call in flight still queues a turn there: a user holding hundreds of connections,
/// each with a listing, would put hundreds of pages between a submit, a job's end or the
/// watchdog's probe and their turn. Through these turns a listing's page waits here, off the
/// control queue, until fewer than ``width`` pages are ahead; users with waiting pages go in
/// rotation, so one user's listings delay another's by at most one page each.
final class ReadTurns: Sendable {
    /// How many pages may be queued on, or run on, the control queue at once.
    let width: Int

    private struct State {
        var inside = 0
        /// The waiting reads of each user, oldest first.
        var waiting: [UInt32: [CheckedContinuation<Void, Never>]] = [:]
        /// Users with waiting reads, in the order they are served.
        var rotation: [UInt32] = []
    }
    private let state = Mutex(State())

    /// Creates the turns.
    /// - Parameter width: reads let through at once; at least 1.
    init(width: Int = 2) {
        self.width = max(1, width)
    }

    /// Runs `read` once it is this read's turn, and gives the turn to the next waiting read
    /// when it returns or throws.
    /// - Parameters:
    ///   - user: whose read it is (the caller's uid), for the rotation.
    ///   - read: the read; it should be one turn of the control queue.
    /// - Returns: what `read` returns.
    /// - Throws: what `read` throws.
    func run<T: Sendable, Failure: Error>(as user: UInt32, _ read: () async throws(Failure) -> T) async throws(Failure) -> T {
        await enter(as: user)
        defer { leave() }
        return try await read()
    }

    /// How many reads wait for their turn now.
    var waitingReads: Int {
        state.withLock { $0.waiting.values.reduce(0) { $0 + $1.count } }
    }

    private func enter(as user: UInt32) async {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                if state.inside < width, state.rotation.isEmpty {
                    state.inside += 1
                    return true
                }
                if state.waiting[user] == nil { state.rotation.append(user) }
                state.waiting[user, default: []].append(turn)
                return false
            }
            if admitted { turn.resume() }
        }
    }

    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.rotation.isEmpty else {
                state.inside -= 1
                return nil
            }
            // The place goes straight to the next user's oldest read; that user goes to the
            // back of the rotation if more of their reads wait.
            let user = state.rotation.removeFirst()
            var reads = state.waiting.removeValue(forKey: user) ?? []
            let turn = reads.removeFirst()
            if !reads.isEmpty {
                state.waiting[user] = reads
                state.rotation.append(user)
            }
            return turn
        }
        next?.resume()
    }
}
