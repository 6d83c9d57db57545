import OrchestratorAPI
import Synchronization

/// `io.orchd.Jobs.Wait`: replies once every listed job has finished. Event-driven: the
/// scheduler answers when it records the last end, no polling. Called with `more`, the jobs
/// come in pages (``JobPageStream``), so no reply outgrows the message cap however many jobs
/// were waited for.
struct WaitHandler: VarlinkMethodHandler {
    static let method = JobsInterface.wait
    /// Waits, or follows, for as long as the client likes.
    static let mayWaitIndefinitely = true
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.IDsParameters.self)
            guard !parameters.ids.isEmpty else { throw VarlinkError.invalidParameter("ids") }
            let more = call.more
            let caller = call.caller
            Task { [scheduler] in
                let jobs: [Job]
                do throws(SchedulerError) {
                    jobs = try await scheduler.wait(for: parameters.ids, by: caller)
                } catch {
                    responder.fail(error.varlinkError)
                    return
                }
                guard more else {
                    responder.reply(JobsInterface.JobsReply(jobs: jobs))
                    return
                }
                let rest = Rest(jobs)
                JobPageStream.stream(to: responder) { count, completion in
                    completion(.success(rest.take(count)))
                }
            }
        } catch {
            responder.fail(error)
        }
    }

    /// The finished jobs not sent yet. Pages never overlap; the lock publishes the position
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
}
