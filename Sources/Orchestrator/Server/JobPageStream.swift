import OrchestratorAPI

/// Streams a list of jobs as `JobsReply` pages, each produced only when the client has room
/// for it (``ReplyPacer``): neither the daemon nor the client's outbox holds the whole list,
/// however many jobs it has. Used by `List` and `Wait` when called with `more`.
///
/// A page has at most ``pageSize`` jobs, and is split into several replies when its jobs
/// could encode to more than ``replyBytes`` (jobs with long command lines): no reply comes
/// near a client's message cap (64 MiB for orchctl).
enum JobPageStream {
    /// Jobs read per page at most.
    static let pageSize = 1000
    /// The most a reply's jobs may encode to, by ``sizeBound(of:)``, unless it has one job.
    static let replyBytes = 4 << 20

    /// Streams pages until one has fewer than ``pageSize`` jobs (possibly none); the last
    /// reply of that page ends the call.
    /// - Parameters:
    ///   - responder: the call's replies; its call has `more`.
    ///   - nextPage: hands the next at most `count` jobs to its completion, from any queue, or
    ///     the error that ends the stream. Calls never overlap.
    static func stream(
        to responder: VarlinkResponder,
        nextPage: @escaping @Sendable (_ count: Int, _ completion: @escaping @Sendable (Result<[Job], VarlinkError>) -> Void) -> Void
    ) {
        ReplyPacer(responder: responder, step: { done in
            nextPage(pageSize) { result in
                switch result {
                case .success(let jobs):
                    let isLastPage = jobs.count < pageSize
                    let replies = split(jobs)
                    for (index, reply) in replies.enumerated() {
                        responder.reply(
                            JobsInterface.JobsReply(jobs: reply), continues: !(isLastPage && index == replies.count - 1))
                    }
                    done(isLastPage ? .finished : .more)
                case .failure(let error):
                    responder.fail(error)
                    done(.finished)
                }
            }
        }).start()
    }

    /// Splits a page into replies of at most ``replyBytes`` by ``sizeBound(of:)`` (at least
    /// one job each); an empty page is one empty reply.
    static func split(_ jobs: [Job]) -> [[Job]] {
        var replies: [[Job]] = []
        var current: [Job] = []
        var bytes = 0
        for job in jobs {
            let size = sizeBound(of: job)
            if !current.isEmpty && bytes + size > replyBytes {
                replies.append(current)
                current = []
                bytes = 0
            }
            current.append(job)
            bytes += size
        }
        if !current.isEmpty || replies.isEmpty { replies.append(current) }
        return replies
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
