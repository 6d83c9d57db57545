import Synchronization

/// The bytes that each user's connections hold for them: calls read but not yet handled
/// (messages not yet ended by their NUL, calls waiting behind the one being handled) and
/// replies the client has not read.
///
/// Each connection caps its own (1 MiB a message, 4 MiB of waiting calls, 64 MiB of replies),
/// and a user holds at most ``VarlinkServer/maximumConnectionsPerUser`` connections; together
/// that let one user have orchd hold gigabytes (1,000 connections each holding a message just
/// short of its end grew orchd to 1.08 GB; 24 that pipelined calls and read no reply, to
/// 1.56 GB). The budget bounds the sum per user: a connection whose read would pass it is
/// answered with an error and closed, one whose reply would pass it is dropped. Root and
/// orchd's own user are not counted, as they are not for connections.
final class UserBufferBudget: Sendable {
    /// The most bytes one user's connections may hold.
    static let maximumBytesPerUser = 128 << 20

    private let held = Mutex<[UInt32: Int]>([:])
    /// The most bytes one user's connections may hold.
    let limit: Int

    /// - Parameter limit: the most bytes one user's connections may hold.
    init(limit: Int = maximumBytesPerUser) {
        self.limit = limit
    }

    /// Changes `uid`'s held bytes by `delta`.
    /// - Returns: `false`, changing nothing, when a growth would pass the limit.
    func change(_ uid: UInt32, by delta: Int) -> Bool {
        held.withLock { held in
            let total = held[uid, default: 0] + delta
            if delta > 0 && total > limit { return false }
            held[uid] = total > 0 ? total : nil
            return true
        }
    }

    /// The bytes `uid`'s connections hold now.
    func bytes(of uid: UInt32) -> Int {
        held.withLock { $0[uid, default: 0] }
    }
}
