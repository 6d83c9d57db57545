import Foundation
import OrchestratorAPI

// MARK: - Queue management

extension Scheduler {
    /// Every queue that has jobs or settings, by name.
    public var queues: [QueueInfo] {
        runners.values.map(info(of:)).sorted { $0.name < $1.name }
    }

    /// A queue as `orchctl queues` shows it, with its executor and, for Slurm, whether Slurm
    /// answered last time.
    func info(of runner: QueueRunner) -> QueueInfo {
        var info = runner.info(default: configuration.retryPolicy)
        info.executor = runner.settings.executor.kind.rawValue
        if runner.settings.executor.kind == .slurm {
            info.slurm = slurmExecutor(for: runner.name, settings: runner.settings.executor).info
        }
        return info
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
    ///   - executor: where the queue's jobs run from now on, and its Slurm settings; running
    ///     attempts stay where they are.
    /// - Returns: the queue as now set, once durable.
    /// - Throws: `invalidSetting`, or a storage failure.
    public func setQueue(
        _ name: QueueName, concurrency: Int?, retryBase: Duration?, retryCap: Duration?, hooks: [String: String]? = nil,
        executor: QueueExecutorSettings.Change = .init()
    ) async throws(SchedulerError) -> QueueInfo {
        if let problem = executor.problem {
            throw .invalidSetting(problem)
        }
        if let concurrency, !(1...10_000).contains(concurrency) {
            throw .invalidSetting("concurrency must be from 1 to 10000, not \(concurrency)")
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
        settings.executor = executor.applied(to: settings.executor)
        try storeCall { try store.save(settings) }
        runner.settings = settings
        runner.concurrency = settings.concurrency ?? configuration.concurrency
        slurmExecutors[name]?.update(settings.executor)
        let info = info(of: runner)
        feed(runner)
        await durable()
        return info
    }

    /// Applies the configuration file's executor settings to their queues (creating them when
    /// new), at start and at each reload; running attempts stay where they are. A queue whose
    /// settings cannot be stored keeps its old ones, logged.
    public func applyQueueExecutors(_ changes: [QueueName: QueueExecutorSettings.Change]) {
        for (name, change) in changes.sorted(by: { $0.key < $1.key }) {
            let runner = runner(for: name)
            var settings = runner.settings
            settings.executor = change.applied(to: settings.executor)
            guard settings != runner.settings else { continue }
            do {
                try store.save(settings)
            } catch {
                DaemonLog.error("cannot store the executor of queue \(name) from the configuration file: \(error)")
                continue
            }
            runner.settings = settings
            slurmExecutors[name]?.update(settings.executor)
            DaemonLog.info("queue \(name): executor \(settings.executor.kind.rawValue) (configuration file)")
            groupCommit.changed()
            feed(runner)
        }
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
        let infos = targets.map(info(of:))
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
