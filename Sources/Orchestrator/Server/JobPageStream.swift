import OrchestratorAPI
import Synchronization

/// Streams a list of jobs as `JobsReply` replies, each produced only when the client has room
/// for it (``ReplyPacer``): neither the daemon nor the client's outbox holds the whole list,
/// however many jobs it has. Used by `List` and `Wait` when called with `more`.
///
/// A reply has at most ``pageSize`` jobs, and no more than ``replyBytes`` of them by
/// ``sizeBound(of:)`` (jobs with long command lines come fewer to a reply): no reply comes near
/// a client's message cap (64 MiB for orchctl), and each step adds at most one reply to the
/// outbox. Jobs are fetched as many at a time as the last ones suggest fit in a reply.
/// `Cancel`, `CancelMatching` and `RetryFailed` called with `more` stream the jobs they answer
/// with too.
enum JobPageStream {
    /// Jobs per reply at most.
    static let pageSize = 1000
    /// The most a reply's jobs may encode to, by ``sizeBound(of:)``, unless it has one job.
    static let replyBytes = 4 << 20
    /// Jobs fetched first, before their sizes are known.
    static let firstFetch = 64

    /// Streams replies until the jobs run out; the last reply (possibly with no jobs) ends
    /// the call.
    /// - Parameters:
    ///   - responder: the call's replies; its call has `more`.
    ///   - nextPage: hands the next at most `count` jobs to its completion, from any queue, or
    ///     the error that ends the stream; fewer than `count` only when there are no more.
    ///     Calls never overlap.
    ///   - makeReply: the reply that carries a page of jobs; `JobsReply` unless the method
    ///     answers with more than jobs (`RetryFailed`).
    static func stream<Reply: Codable & Sendable>(
        to responder: VarlinkResponder,
        nextPage: @escaping @Sendable (_ count: Int, _ completion: @escaping @Sendable (Result<[Job], VarlinkError>) -> Void) -> Void,
        makeReply: @escaping @Sendable (_ jobs: [Job]) -> Reply
    ) {
        let state = Pending()
        ReplyPacer(responder: responder, step: { done in
            @Sendable func send(_ jobs: [Job], isLast: Bool) {
                responder.reply(makeReply(jobs), continues: !isLast)
                done(isLast ? .finished : .more)
            }
            if let (reply, isLast) = state.nextReply() { return send(reply, isLast: isLast) }
            nextPage(state.fetchCount) { result in
                switch result {
                case .success(let jobs):
                    state.fetched(jobs)
                    let (reply, isLast) = state.nextReply() ?? ([], true)
                    send(reply, isLast: isLast)
                case .failure(let error):
                    responder.fail(error)
                    done(.finished)
                }
            }
        }).start()
    }

    /// Streams jobs as `JobsReply` replies (`List`); see
    /// ``stream(to:nextPage:makeReply:)``.
    static func stream(
        to responder: VarlinkResponder,
        nextPage: @escaping @Sendable (_ count: Int, _ completion: @escaping @Sendable (Result<[Job], VarlinkError>) -> Void) -> Void
    ) {
        stream(to: responder, nextPage: nextPage) { JobsInterface.JobsReply(jobs: $0) }
    }

    /// Streams jobs already in hand (the answer of a `Wait`, a `Cancel` or a `RetryFailed`),
    /// in replies as ``stream(to:nextPage:makeReply:)`` sizes them.
    /// - Parameters:
    ///   - jobs: the jobs, in the order to send them.
    ///   - responder: the call's replies; its call has `more`.
    ///   - makeReply: the reply that carries a page of jobs.
    static func stream<Reply: Codable & Sendable>(
        _ jobs: [Job], to responder: VarlinkResponder, makeReply: @escaping @Sendable (_ jobs: [Job]) -> Reply
    ) {
        let rest = Rest(jobs)
        stream(to: responder, nextPage: { count, completion in completion(.success(rest.take(count))) }, makeReply: makeReply)
    }

    /// Streams jobs already in hand as `JobsReply` replies; see
    /// ``stream(_:to:makeReply:)``.
    static func stream(_ jobs: [Job], to responder: VarlinkResponder) {
        stream(jobs, to: responder) { JobsInterface.JobsReply(jobs: $0) }
    }

    /// Jobs in hand not sent yet. Pages never overlap; the lock publishes the position
    /// between the queues they run on.
    private final class Rest: Sendable {
        private let jobs: [Job]
        private let sent = Mutex(0)

        init(_ jobs: [Job]) { self.jobs = jobs }

        /// The next at most `count` jobs.
        func take(_ count: Int) -> [Job] {
            sent.withLock { sent in
                let end = min(sent + count, jobs.count)
                defer { sent = end }
                return Array(jobs[sent..<end])
            }
        }
    }

    /// Jobs fetched but not sent yet, and how many to fetch next. Steps never overlap; the
    /// lock publishes the state between the queues they run on.
    final class Pending: Sendable {
        private struct State {
            var jobs: ArraySlice<Job> = []
            var exhausted = false
            var fetchCount = JobPageStream.firstFetch
        }
        private let state = Mutex(State())

        var fetchCount: Int { state.withLock { $0.fetchCount } }

        /// Takes in a fetch of ``fetchCount`` jobs, and sizes the next fetch by the largest of
        /// them.
        func fetched(_ jobs: [Job]) {
            state.withLock { state in
                state.exhausted = jobs.count < state.fetchCount
                let largest = jobs.map(JobPageStream.sizeBound(of:)).max() ?? 1
                state.fetchCount = min(JobPageStream.pageSize, max(1, JobPageStream.replyBytes / largest))
                state.jobs = jobs[...]
            }
        }

        /// The next reply from what was fetched, and whether it is the last; `nil` when the
        /// next reply needs a fetch first.
        func nextReply() -> (jobs: [Job], isLast: Bool)? {
            state.withLock { state in
                if state.jobs.isEmpty { return state.exhausted ? ([], true) : nil }
                var reply: [Job] = []
                var bytes = 0
                while let job = state.jobs.first, reply.count < JobPageStream.pageSize {
                    let size = JobPageStream.sizeBound(of: job)
                    if !reply.isEmpty && bytes + size > JobPageStream.replyBytes { break }
                    reply.append(job)
                    bytes += size
                    state.jobs.removeFirst()
                }
                return (reply, state.jobs.isEmpty && state.exhausted)
            }
        }
    }

    /// An upper bound of a job's encoded size in bytes, without encoding it (that happens on
    /// the connection's queue): the fixed fields, and every string as if each of its bytes
    /// were escaped as `\u00XX`.
    static func sizeBound(of job: Job) -> Int {
        let spec = job.spec
        var text = spec.cwd.utf8.count + (spec.name?.utf8.count ?? 0) + (spec.uniqueKey?.utf8.count ?? 0)
            + (job.state.result?.reason?.utf8.count ?? 0)
        switch spec.command {
        case .argv(let arguments): text += arguments.reduce(0) { $0 + $1.utf8.count + 3 }
        case .shell(let line): text += line.utf8.count
        }
        for (key, value) in spec.labels { text += key.utf8.count + value.utf8.count + 6 }
        return 1024 + 6 * text + 24 * spec.after.count
    }
}
