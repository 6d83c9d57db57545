import OrchestratorAPI

/// `io.orchd.Queues.Set`: changes a declared queue's settings at run time.
struct SetQueueHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.set
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        Self.apply(call, responder: responder, scheduler: scheduler, declaring: false)
    }

    /// Checks a Set or Add call's settings and hands them to the scheduler: one path for both,
    /// which differ only in whether the queue must be new (Add) or declared already (Set).
    /// The settings are checked here as well as in orchctl, so no client can store a bad one.
    static func apply(_ call: VarlinkMethodCall, responder: VarlinkResponder, scheduler: Scheduler, declaring: Bool) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(QueuesInterface.SetParameters.self)
            if let problem = QueuesInterface.hookProblem(parameters.hooks)
                ?? QueuesInterface.retryProblem(baseUSec: parameters.retryBaseUSec, capUSec: parameters.retryCapUSec)
                ?? QueuesInterface.slurmProblem(partition: parameters.slurmPartition, options: parameters.slurmOptions) {
                throw QueuesInterface.invalidSetting(problem)
            }
            let retryBase = parameters.retryBaseUSec.map(Duration.init(microseconds:))
            let retryCap = parameters.retryCapUSec.map(Duration.init(microseconds:))
            let executor = QueueExecutorSettings.Change(
                executor: parameters.executor, slurmPartition: parameters.slurmPartition, slurmOptions: parameters.slurmOptions)
            responder.complete({ () async throws(SchedulerError) in
                if declaring {
                    try await scheduler.addQueue(
                        parameters.name, concurrency: parameters.concurrency, retryBase: retryBase, retryCap: retryCap,
                        hooks: parameters.hooks, maxRunningPerUser: parameters.maxRunningPerUser, executor: executor)
                } else {
                    try await scheduler.setQueue(
                        parameters.name, concurrency: parameters.concurrency, retryBase: retryBase, retryCap: retryCap,
                        hooks: parameters.hooks, maxRunningPerUser: parameters.maxRunningPerUser, executor: executor)
                }
            }) { QueuesInterface.QueueReply(queue: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
