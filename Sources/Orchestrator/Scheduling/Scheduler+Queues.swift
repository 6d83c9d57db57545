import Foundation
import OrchestratorAPI

// MARK: - Queue management

extension Scheduler {
    /// Every queue that has jobs or settings, by name.
    public var queues: [QueueInfo] { queues(perUser: false) }

    /// Every queue that has jobs or settings, by name.
    /// - Parameter perUser: include each queue's running jobs by user (for admins).
    public func queues(perUser: Bool) -> [QueueInfo] {
        runners.values.map { $0.info(default: configuration.retryPolicy, perUser: perUser) }.sorted { $0.name < $1.name }
    }

    /// Changes a queue's settings, creating the queue when new; takes effect at once.
    /// - Parameters:
    ///   - name: the queue.
    ///   - concurrency: jobs at once (1...10000); more start at once when raised, none start
    ///     until enough finished when lowered; no running job is stopped.
    ///   - retryBase: backoff before the first retry.
    ///   - retryCap: the longest backoff.
    ///   - hooks: commands to set by event kind (``QueuesInterface/hookEvents``); an empty
    ///     command removes one.
    ///   - maxRunningPerUser: the most running jobs one user may have (0 removes the limit);
    ///     no running job is stopped when lowered.
    /// - Returns: the queue as now set, once durable.
    /// - Throws: `invalidSetting`, or a storage failure.
    public func setQueue(
        _ name: QueueName, concurrency: Int?, retryBase: Duration?, retryCap: Duration?, hooks: [String: String]? = nil,
        maxRunningPerUser: Int? = nil
    ) async throws(SchedulerError) -> QueueInfo {
        if let concurrency, !(1...10_000).contains(concurrency) {
            throw .invalidSetting("concurrency must be from 1 to 10000, not \(concurrency)")
        }
        if let maxRunningPerUser, !(0...10_000).contains(maxRunningPerUser) {
            throw .invalidSetting("the per-user limit must be from 0 (no limit) to 10000, not \(maxRunningPerUser)")
        }
        if let retryBase, retryBase <= .zero {
            throw .invalidSetting("the retry base must be longer than zero")
        }
        if let retryCap, retryCap <= .zero {
            throw .invalidSetting("the retry cap must be longer than zero")
        }
        if let unknown = hooks?.keys.first(where: { !QueuesInterface.hookEvents.contains($0) }) {
            throw .invalidSetting(
                "no hook event '\(unknown)'; one of \(QueuesInterface.hookEvents.sorted().joined(separator: ", "))")
        }
        let runner = runner(for: name)
        var settings = runner.settings
        for (event, command) in hooks ?? [:] {
            settings.hooks[event] = command.isEmpty ? nil : command
        }
        if let concurrency { settings.concurrency = concurrency }
        if let retryBase { settings.retryBaseUSec = retryBase.microseconds }
        if let retryCap { settings.retryCapUSec = retryCap.microseconds }
        if let maxRunningPerUser { settings.maxRunningPerUser = maxRunningPerUser == 0 ? nil : maxRunningPerUser }
        try storeCall { try store.save(settings) }
        runner.settings = settings
        runner.concurrency = settings.concurrency ?? configuration.concurrency
        runner.maxRunningPerUser = settings.maxRunningPerUser ?? configuration.maxRunningPerUser
        let info = runner.info(default: configuration.retryPolicy)
        feed(runner)
        await durable()
        return info
    }

    /// Pauses or resumes queues: a paused queue starts nothing new; running jobs go on.
    /// - Parameters:
    ///   - names: the queues; `nil` for every queue.
    ///   - paused: pause (`true`) or resume (`false`).
    /// - Returns: the queues as now set, once durable.
    /// - Throws: `noSuchQueue` (then nothing changed), or a storage failure.
    public func setPaused(_ names: [QueueName]?, paused: Bool) async throws(SchedulerError) -> [QueueInfo] {
        let targets: [QueueRunner]
        if let names {
            if let unknown = names.first(where: { runners[$0] == nil }) {
                throw .noSuchQueue(unknown)
            }
            targets = names.compactMap { runners[$0] }
        } else {
            targets = runners.values.sorted { $0.name < $1.name }
        }
        for runner in targets where runner.settings.paused != paused {
            var settings = runner.settings
            settings.paused = paused
            try storeCall { try store.save(settings) }
            runner.settings = settings
        }
        let infos = targets.map { $0.info(default: configuration.retryPolicy) }
        if !paused { targets.forEach(feed) }
        await durable()
        return infos
    }

    /// A queue's hook commands by event kind.
    func hooks(of name: QueueName) -> [String: String] {
        return runners[name]?.settings.hooks ?? [:]
    }

    /// A job as stored, or `nil`.
    func storedJob(_ id: JobID) -> Job? {
        return try? store.job(id)
    }
}
