import OrchestratorAPI

/// Streams a list of jobs as `JobsReply` pages of at most ``pageSize`` jobs, each page
/// produced only when the client has room for it (``ReplyPacer``): no reply outgrows the
/// message cap, and neither the daemon nor the client's outbox holds the whole list, however
/// many jobs it has. Used by `List` and `Wait` when called with `more`.
enum JobPageStream {
    /// Jobs per reply at most.
    static let pageSize = 1000

    /// Streams pages until one has fewer than ``pageSize`` jobs (possibly none), which ends
    /// the call.
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
                    let isLast = jobs.count < pageSize
                    responder.reply(JobsInterface.JobsReply(jobs: jobs), continues: !isLast)
                    done(isLast ? .finished : .more)
                case .failure(let error):
                    responder.fail(error)
                    done(.finished)
                }
            }
        }).start()
    }
}
