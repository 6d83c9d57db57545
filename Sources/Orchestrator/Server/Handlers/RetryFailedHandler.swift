import OrchestratorAPI
import Synchronization

/// `io.orchd.Jobs.RetryFailed`: retries every failed job (of a queue), reporting those that
/// cannot be retried; in pages when called with `more`.
struct RetryFailedHandler: VarlinkMethodHandler {
    static let method = JobsInterface.retryFailed
    let scheduler: Scheduler

    /// Refusals per reply at most, and the most their messages may take by
    /// ``refusalSizeBound(of:)``, as ``JobPageStream`` bounds a page of jobs.
    static let refusalsPerPage = JobPageStream.pageSize
    static let refusalBytesPerPage = JobPageStream.replyBytes

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.RetryFailedParameters.self)
            let caller = call.caller
            Task { [scheduler] in
                do throws(SchedulerError) {
                    let outcome = try await scheduler.retryFailed(queue: parameters.queue, by: caller)
                    let refused = outcome.refused.map { JobsInterface.RetryFailedReply.Refusal(id: $0.0, message: $0.1.description) }
                    if responder.more {
                        Self.stream(outcome.jobs, refused: refused, to: responder)
                    } else {
                        responder.reply(JobsInterface.RetryFailedReply(jobs: outcome.jobs, refused: refused))
                    }
                } catch {
                    responder.fail(error.varlinkError)
                }
            }
        } catch {
            responder.fail(error)
        }
    }

    /// Sends the refusals first, in pages with no jobs, then the retried jobs in pages as
    /// ``JobPageStream`` sizes them, with no refusals; the last page ends the call. Each page
    /// is sent only when the client has room for it (``ReplyPacer``).
    static func stream(
        _ jobs: [Job], refused: [JobsInterface.RetryFailedReply.Refusal], to responder: VarlinkResponder
    ) {
        let pages = RefusalPages(refused)
        ReplyPacer(responder: responder, step: { done in
            if let page = pages.next() {
                responder.reply(JobsInterface.RetryFailedReply(jobs: [], refused: page), continues: true)
                return done(.more)
            }
            // The refusals are out: the jobs' stream takes the call over and ends it.
            done(.finished)
            JobPageStream.stream(jobs, to: responder) { JobsInterface.RetryFailedReply(jobs: $0, refused: []) }
        }).start()
    }

    /// An upper bound of a refusal's encoded size in bytes: its ID and every byte of its
    /// message escaped as `\u00XX`.
    static func refusalSizeBound(of refusal: JobsInterface.RetryFailedReply.Refusal) -> Int {
        64 + 6 * refusal.message.utf8.count
    }

    /// Refusals not sent yet. Pages never overlap; the lock publishes the position between
    /// the queues they run on.
    private final class RefusalPages: Sendable {
        private let refused: [JobsInterface.RetryFailedReply.Refusal]
        private let sent = Mutex(0)

        init(_ refused: [JobsInterface.RetryFailedReply.Refusal]) { self.refused = refused }

        /// The next page, or `nil` when every refusal has been sent.
        func next() -> [JobsInterface.RetryFailedReply.Refusal]? {
            sent.withLock { sent in
                guard sent < refused.count else { return nil }
                var end = sent
                var bytes = 0
                while end < refused.count, end - sent < RetryFailedHandler.refusalsPerPage {
                    let size = RetryFailedHandler.refusalSizeBound(of: refused[end])
                    if end > sent && bytes + size > RetryFailedHandler.refusalBytesPerPage { break }
                    bytes += size
                    end += 1
                }
                defer { sent = end }
                return Array(refused[sent..<end])
            }
        }
    }
}
