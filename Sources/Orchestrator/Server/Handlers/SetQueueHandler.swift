import OrchestratorAPI

/// `io.orchd.Queues.Set`: changes a queue's concurrency or retry backoff at run time.
struct SetQueueHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.set
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(QueuesInterface.SetParameters.self)
            // Checked here as well as in orchctl, so no client can store such a setting.
            if let problem = QueuesInterface.hookProblem(parameters.hooks)
                ?? QueuesInterface.retryProblem(baseUSec: parameters.retryBaseUSec, capUSec: parameters.retryCapUSec)
                ?? QueuesInterface.slurmProblem(partition: parameters.slurmPartition, options: parameters.slurmOptions) {
                throw QueuesInterface.invalidSetting(problem)
            }
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.setQueue(
                    parameters.name, concurrency: parameters.concurrency,
                    retryBase: parameters.retryBaseUSec.map(Duration.init(microseconds:)),
                    retryCap: parameters.retryCapUSec.map(Duration.init(microseconds:)), hooks: parameters.hooks,
                    maxRunningPerUser: parameters.maxRunningPerUser,
                    executor: QueueExecutorSettings.Change(
                        executor: parameters.executor, slurmPartition: parameters.slurmPartition, slurmOptions: parameters.slurmOptions))
            }) { QueuesInterface.QueueReply(queue: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
