import Foundation
import OrchestratorAPI

// MARK: - Event delivery, subscriptions and drain waits

extension Scheduler {
    /// Hands every durable event not yet delivered to the observers and live subscribers, in
    /// sequence order. Runs after each group-commit barrier.
    /// - Parameter through: the last event the barrier made durable; `nil` for every event
    ///   committed (under `--sync interval`, or after the flush at a stop).
    func deliverEvents(through: Int64? = nil) {
        while true {
            let events: [Event]
            do {
                events = try eventLog.events(after: lastDeliveredSeq, through: through ?? .max, limit: 1000)
            } catch {
                DaemonLog.error("cannot read the event log: \(error)")
                return
            }
            for event in events {
                lastDeliveredSeq = event.seq
                observers.notify { $0.eventRecorded(event) }
                subscribers.removeAll { subscriber in subscriber.wants(event) && !subscriber.deliver(event) }
            }
            // Each page ends a delivery, so what observers gather stays bounded.
            if !events.isEmpty { observers.notify { $0.eventsDelivered() } }
            if events.count < 1000 { break }
        }
        trimEventLog()
    }

    /// Streams the retained events after `since` that match the filters, then (with `follow`)
    /// every new one as it becomes durable. The backlog is read a page per turn of the control
    /// queue, each page once the reader has room for it (`whenReady`), so a backlog of any
    /// size streams in bounded memory to a reader of any speed; the subscriber goes live in
    /// the same turn as the last page, so it misses no event and sees none twice.
    /// - Parameters:
    ///   - since: only events with a larger sequence number.
    ///   - follow: keep delivering new events after the backlog.
    ///   - resume: the subscriber goes on with a stream it was reading, `since` being the last
    ///     event it got: the filters are not checked again (a pruned job's last events may
    ///     have been trimmed since), and events after `since` that retention dropped end the
    ///     stream through `drop` rather than being skipped.
    ///   - caller: who reads; one who is no admin gets only their own jobs' events.
    ///   - send: delivers one event (`isLast` when the stream ends with it; `nil` with
    ///     `isLast` for an empty backlog without follow); returns `false` once the reader is gone.
    ///   - whenReady: calls its closure once the reader has room for the next page of the
    ///     backlog (``VarlinkResponder/whenReady(_:)``).
    ///   - isBackedUp: whether a live subscriber's reader has fallen behind: it then leaves the
    ///     live list and catches up from the log (``sendBacklog(after:follow:queue:jobID:caller:pending:resumed:stream:)``).
    ///   - drop: ends a stream whose reader fell so far behind that retention trimmed events
    ///     it had not been sent, with the last event it was sent.
    /// - Throws: ``SchedulerError/unknownQueue(_:known:)`` for a queue orchd neither knows nor
    ///   retains an event of, ``SchedulerError/noSuchJob(_:)`` for a job it neither stores nor
    ///   retains an event of (a typo must not read as "no events"),
    ///   ``SchedulerError/permissionDenied(_:)`` for another user's job (unless an admin asks), or
    ///   the storage refusal (``storageError(_:)``) when the store cannot tell.
    public func subscribe(
        since: Int64, follow: Bool, queue: QueueName?, jobID: JobID?, resume: Bool = false, caller: Caller = .root,
        send: @escaping @Sendable (_ event: Event?, _ isLast: Bool) -> Bool,
        whenReady: @escaping @Sendable (_ body: @escaping @Sendable () -> Void) -> Void = { $0() },
        isBackedUp: @escaping @Sendable () -> Bool = { false },
        drop: @escaping @Sendable (_ lastSent: Int64?) -> Void = { _ in }
    ) throws(SchedulerError) {
        if !resume { try requireRetainedSubject(queue: queue, jobID: jobID, caller: caller) }
        let stream = EventStream(send: send, whenReady: whenReady, isBackedUp: isBackedUp, drop: drop)
        // A resumed stream that had got no event yet (since 0) asked for whatever was retained.
        sendBacklog(
            after: since, follow: follow, queue: queue, jobID: jobID, caller: caller, pending: nil,
            resumed: resume && since > 0, stream: stream)
    }

    /// Refuses an event filter naming a queue or job that nothing in orchd knows of: neither
    /// a queue (declared, or holding finished jobs) or stored job, nor a retained event. A
    /// removed queue or pruned job whose events are still retained passes, so its history
    /// stays readable. Another user's job is refused to one who is no admin, as `show` refuses
    /// it: an empty stream would read as "no events".
    private func requireRetainedSubject(queue: QueueName?, jobID: JobID?, caller: Caller) throws(SchedulerError) {
        do {
            if let queue, runners[queue] == nil, try !eventLog.mentions(queue: queue) {
                try requireKnownQueue(queue)
            }
            if let jobID {
                if let (owner, _) = try store.ownerAndProgress(jobID) {
                    guard caller.mayManage(owner: owner) else { throw SchedulerError.permissionDenied(jobID) }
                } else if try !eventLog.mentions(jobID: jobID) {
                    throw SchedulerError.noSuchJob(jobID)
                }
            }
        } catch let error as SchedulerError {
            throw error
        } catch {
            throw storageError(error)
        }
    }

    /// Sends a subscriber the retained events after `cursor` that it may see, a page per turn
    /// of the control queue, each once its reader has room; with `follow`, adds it to the live
    /// list in the turn of the last page. The same path serves a live subscriber that fell
    /// behind (a burst of events larger than its connection holds, or a reader that paused):
    /// it leaves the live list and comes back here after the last event it was sent, so a
    /// reader that keeps reading misses nothing and sees nothing twice.
    /// - Parameters:
    ///   - pending: the previous page's last event, held back so that, without follow, the
    ///     last event sent can say it is last.
    ///   - resumed: the reader has had every event through `cursor` (`pending` aside): events
    ///     after it that retention trimmed meanwhile (`--event-retention`) are a gap, and its
    ///     stream ends with `SubscriberTooSlow`, naming where to resume, rather than skip them.
    ///     `false` for a new subscription's first page, which starts at the oldest event
    ///     retained after `since`.
    func sendBacklog(
        after cursor: Int64, follow: Bool, queue: QueueName?, jobID: JobID?, caller: Caller, pending: Event?,
        resumed: Bool = false, stream: EventStream
    ) {
        let send = stream.send
        if resumed, cursor < eventLogTrimmedThrough {
            if let pending, !send(pending, false) { return }
            return stream.drop(pending?.seq ?? cursor)
        }
        let page: [Event]
        do {
            page = try eventLog.events(after: cursor, through: lastDeliveredSeq, queue: queue, jobID: jobID, limit: 500)
        } catch {
            DaemonLog.error("cannot read the event log: \(error)")
            _ = send(nil, true)
            return
        }
        var held = pending
        for event in page where EventSubscriber.shows(event, to: caller) {
            if let previous = held, !send(previous, false) { return }
            held = event
        }
        if page.count == 500 {
            let next = page.last?.seq ?? cursor
            let carried = held
            // The next page once the reader has read most of this one.
            stream.whenReady { [self] in
                later {
                    $0.sendBacklog(
                        after: next, follow: follow, queue: queue, jobID: jobID, caller: caller, pending: carried, resumed: true,
                        stream: stream)
                }
            }
            return
        }
        if follow {
            if let held, !send(held, false) { return }
            var lastSent = held?.seq ?? cursor
            subscribers.append(EventSubscriber(queue: queue, jobID: jobID, caller: caller) { [weak self] event in
                guard !stream.isBackedUp() else {
                    // Off the live list, and back to the log once the reader has room, rather
                    // than queueing live events for it without bound.
                    guard let scheduler = self else { return false }
                    let resumeAfter = lastSent
                    stream.whenReady { [weak scheduler] in
                        scheduler?.later {
                            $0.sendBacklog(
                                after: resumeAfter, follow: true, queue: queue, jobID: jobID, caller: caller, pending: nil,
                                resumed: true, stream: stream)
                        }
                    }
                    return false
                }
                // Only events after the cursor: a `since` ahead of the log skips the live
                // events up to it, as the backlog does.
                guard event.seq > lastSent else { return true }
                lastSent = event.seq
                return send(event, false)
            })
        } else {
            _ = send(held, true)
        }
    }

    /// Answers once the queue has no waiting, queued or running job (at once when it has none).
    /// - Parameter perUser: include the running jobs by user, as `queues` does for admins.
    /// - Returns: the queue as `queues` shows it, once its drain is durable.
    /// - Throws: `noSuchQueue`.
    public func waitUntilDrained(_ name: QueueName, perUser: Bool = false) async throws(SchedulerError) -> QueueInfo {
        guard let runner = runners[name] else { throw .noSuchQueue(name) }
        if runner.counts.live == 0 {
            let drained = info(of: runner, perUser: perUser)
            await durableSoFar()
            return drained
        }
        return await withCheckedContinuation { (done: CheckedContinuation<QueueInfo, Never>) in
            drainWaiters[name, default: []].append { drained in
                var drained = drained
                if !perUser { drained.runningPerUser = nil }
                done.resume(returning: drained)
            }
        }
    }

    /// After a change of `runner`'s counts: when its last live job just ended, records
    /// `queue_drained` and answers the drain waits.
    func noteDrainIfEmpty(_ runner: QueueRunner, hadLiveJobs: Bool) {
        guard hadLiveJobs, runner.counts.live == 0 else { return }
        do {
            try eventLog.append(kind: .queueDrained, queue: runner.name, at: Date())
        } catch {
            DaemonLog.error("cannot record that queue \(runner.name) drained: \(error)")
        }
        let drained = info(of: runner, perUser: true)
        for waiter in drainWaiters.removeValue(forKey: runner.name) ?? [] {
            groupCommit.afterDurable { waiter(drained) }
        }
    }

    /// Records `daemon_ready` or `daemon_stopping`.
    public func recordDaemonEvent(_ kind: EventKind) {
        do {
            try eventLog.append(kind: kind, at: Date())
            groupCommit.changed()
        } catch {
            DaemonLog.error("cannot record \(kind): \(error)")
        }
    }
}

/// How one subscription hands out events (see ``Scheduler/subscribe(since:follow:queue:jobID:send:whenReady:isBackedUp:drop:)``).
struct EventStream: Sendable {
    let send: @Sendable (Event?, Bool) -> Bool
    let whenReady: @Sendable (@escaping @Sendable () -> Void) -> Void
    let isBackedUp: @Sendable () -> Bool
    let drop: @Sendable (Int64?) -> Void
}
