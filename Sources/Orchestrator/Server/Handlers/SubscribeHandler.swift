import OrchestratorAPI

/// `io.orchd.Jobs.Subscribe`: streams the event log's backlog, then (with `follow`) live
/// events, one per reply. The backlog is paced by the reader (a page once it has room); a live
/// subscriber that stops reading is dropped. A client that disconnects is dropped at the next
/// event.
struct SubscribeHandler: VarlinkMethodHandler {
    static let method = JobsInterface.subscribe
    /// Waits, or follows, for as long as the client likes.
    static let mayWaitIndefinitely = true
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.SubscribeParameters.self)
            if let since = parameters.since, since < 0 { throw VarlinkError.invalidParameter("since") }
            if let id = parameters.jobId, id.rawValue <= 0 { throw VarlinkError.invalidParameter("jobId") }
            let scheduler = self.scheduler
            Task {
                do throws(SchedulerError) {
                    try await scheduler.subscribe(
                        since: parameters.since ?? 0, follow: parameters.follow ?? false, queue: parameters.queue,
                        jobID: parameters.jobId, resume: parameters.resume ?? false, caller: call.caller,
                        send: { event, isLast in
                            guard responder.isConnected() else { return false }
                            responder.reply(JobsInterface.EventReply(event: event), continues: !isLast)
                            return true
                        },
                        whenReady: { responder.whenReady($0) },
                        isBackedUp: { responder.isBackedUp() },
                        drop: { lastSent in
                            // It stopped reading: end its stream rather than queue events for it
                            // without bound; it can resume from the last event it processed.
                            responder.fail(JobsInterface.subscriberTooSlow(lastSeen: lastSent))
                        })
                } catch {
                    // A filter naming nothing orchd knows of, or a store that cannot tell.
                    responder.fail(error.varlinkError)
                }
            }
        } catch {
            responder.fail(error)
        }
    }
}
