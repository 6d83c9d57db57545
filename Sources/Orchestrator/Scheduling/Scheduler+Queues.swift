import Foundation
import OrchestratorAPI

// MARK: - Queue management

extension Scheduler {
    /// A queue the configuration file declares (`queue.NAME = concurrency=4, retry-base=10s`),
    /// with the settings it gives; `nil` settings keep the queue's own (or the defaults).
    public struct ConfiguredQueue: Sendable, Equatable {
        public var name: QueueName
        public var concurrency: Int?
        public var retryBase: Duration?
        public var retryCap: Duration?
        /// The most running jobs one user may have; 0 removes the limit.
        public var maxRunningPerUser: Int?
        /// Where its jobs run (`executor=slurm, slurm-partition=P, slurm-option=--mem=2G`).
        public var executor: QueueExecutorSettings.Change

        /// Creates a value with every field given.
        public init(
            name: QueueName, concurrency: Int? = nil, retryBase: Duration? = nil, retryCap: Duration? = nil,
            maxRunningPerUser: Int? = nil, executor: QueueExecutorSettings.Change = .init()
        ) {
            self.name = name
            self.concurrency = concurrency
            self.retryBase = retryBase
            self.retryCap = retryCap
            self.maxRunningPerUser = maxRunningPerUser
            self.executor = executor
        }
    }

    /// Every declared queue, by name.
    public var queues: [QueueInfo] { queues(perUser: false) }

    /// Every declared queue, by name.
    /// - Parameter perUser: include each queue's running jobs by user (for admins).
    public func queues(perUser: Bool) -> [QueueInfo] {
        runners.values.filter(\.isDeclared).map { info(of: $0, perUser: perUser) }.sorted { $0.name < $1.name }
    }

    /// A queue as `orchctl queues` shows it, with its executor and, for Slurm, whether Slurm
    /// answered last time.
    /// - Parameter perUser: include the queue's running jobs by user (for admins).
    func info(of runner: QueueRunner, perUser: Bool = false) -> QueueInfo {
        var info = runner.info(default: configuration.retryPolicy, perUser: perUser)
        info.executor = runner.settings.executor.kind.rawValue
        if runner.settings.executor.kind == .slurm {
            info.slurm = slurmExecutor(for: runner.name, settings: runner.settings.executor).info
        }
        return info
    }

    /// Declares a new queue with its settings (`orchctl queue add`).
    /// - Parameters: as ``setQueue(_:concurrency:retryBase:retryCap:hooks:maxRunningPerUser:executor:)``.
    /// - Returns: the queue, once durable.
    /// - Throws: `queueExists` when it is declared already, `invalidSetting`, or a storage
    ///   failure.
    public func addQueue(
        _ name: QueueName, concurrency: Int?, retryBase: Duration?, retryCap: Duration?, hooks: [String: String]? = nil,
        maxRunningPerUser: Int? = nil, executor: QueueExecutorSettings.Change = .init()
    ) async throws(SchedulerError) -> QueueInfo {
        if runners[name]?.isDeclared == true { throw .queueExists(name) }
        return try await changeQueue(
            name, concurrency: concurrency, retryBase: retryBase, retryCap: retryCap, hooks: hooks,
            maxRunningPerUser: maxRunningPerUser, executor: executor)
    }

    /// Declares the queues of the configuration file that are not declared yet, and applies
    /// the settings the file gives for each (at start-up and at each reload).
    /// - Parameter configured: the queues the file declares, with the settings it gives.
    public func declareConfiguredQueues(_ configured: [ConfiguredQueue]) async throws(SchedulerError) {
        for queue in configured {
            _ = try await changeQueue(
                queue.name, concurrency: queue.concurrency, retryBase: queue.retryBase, retryCap: queue.retryCap, hooks: nil,
                maxRunningPerUser: queue.maxRunningPerUser, executor: queue.executor)
        }
    }

    /// Removes a declared queue (`orchctl queue remove`). Its finished jobs stay; jobs can no
    /// longer be submitted to it.
    /// - Throws: `noSuchQueue`; `queueNotRemovable` for `default`, or while the queue has a
    ///   job that has not finished; or a storage failure. Nothing changed then.
    public func removeQueue(_ name: QueueName) async throws(SchedulerError) {
        guard let runner = runners[name], runner.isDeclared else { throw .noSuchQueue(name) }
        if name == .default { throw .queueNotRemovable(name, reason: "the default queue always exists") }
        let counts = runner.counts
        guard counts.live == 0 else {
            let parts = [("running", counts.running), ("queued", counts.queued), ("waiting", counts.waiting)]
                .filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
            throw .queueNotRemovable(
                name, reason: "it has \(counts.live) unfinished job\(counts.live == 1 ? "" : "s") (\(parts.joined(separator: ", "))); "
                    + "cancel them ('orchctl cancel --queue \(name)') or wait for them ('orchctl wait --queue \(name) --drained') first")
        }
        try storeCall { try store.deleteQueue(name) }
        if counts.finished == 0 {
            runners[name] = nil
        } else {
            runner.isDeclared = false
            runner.settings = QueueSettings(name: name)
        }
        groupCommit.changed()
        await durable()
    }

    /// Changes a declared queue's settings; takes effect at once.
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
    ///   - executor: where the queue's jobs run from now on, and its Slurm settings; running
    ///     attempts stay where they are.
    /// - Returns: the queue as now set, once durable.
    /// - Throws: `noSuchQueue` when the queue is not declared, `invalidSetting`, or a storage
    ///   failure.
    public func setQueue(
        _ name: QueueName, concurrency: Int?, retryBase: Duration?, retryCap: Duration?, hooks: [String: String]? = nil,
        maxRunningPerUser: Int? = nil, executor: QueueExecutorSettings.Change = .init()
    ) async throws(SchedulerError) -> QueueInfo {
        guard runners[name]?.isDeclared == true else { throw .noSuchQueue(name) }
        return try await changeQueue(
            name, concurrency: concurrency, retryBase: retryBase, retryCap: retryCap, hooks: hooks,
            maxRunningPerUser: maxRunningPerUser, executor: executor)
    }

    /// Stores a queue's settings, declaring it when it is not.
    private func changeQueue(
        _ name: QueueName, concurrency: Int?, retryBase: Duration?, retryCap: Duration?, hooks: [String: String]?,
        maxRunningPerUser: Int? = nil, executor: QueueExecutorSettings.Change = .init()
    ) async throws(SchedulerError) -> QueueInfo {
        if let problem = executor.problem {
            throw .invalidSetting(problem)
        }
        if let concurrency, !(1...10_000).contains(concurrency) {
            throw .invalidSetting("concurrency must be from 1 to 10000, not \(concurrency)")
        }
        if let maxRunningPerUser, !(0...10_000).contains(maxRunningPerUser) {
            throw .invalidSetting("the per-user limit must be from 0 (no limit) to 10000, not \(maxRunningPerUser)")
        }
        if let problem = QueuesInterface.retryProblem(baseUSec: retryBase?.microseconds, capUSec: retryCap?.microseconds) {
            throw .invalidSetting(problem)
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
        // Checked again with the queue's stored base or cap: given in two calls, a cap
        // shorter than the base passed the check of each call alone.
        if retryBase != nil || retryCap != nil,
           let problem = QueuesInterface.retryProblem(baseUSec: settings.retryBaseUSec, capUSec: settings.retryCapUSec) {
            throw .invalidSetting("queue \(name): " + problem)
        }
        if let maxRunningPerUser { settings.maxRunningPerUser = maxRunningPerUser == 0 ? nil : maxRunningPerUser }
        settings.executor = executor.applied(to: settings.executor)
        try storeCall { try store.save(settings) }
        runner.settings = settings
        runner.isDeclared = true
        runner.concurrency = settings.concurrency ?? configuration.concurrency
        runner.maxRunningPerUser = settings.maxRunningPerUser ?? configuration.maxRunningPerUser
        slurmExecutors[name]?.update(settings.executor)
        let info = info(of: runner)
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
            if let unknown = names.first(where: { runners[$0]?.isDeclared != true }) {
                throw .noSuchQueue(unknown)
            }
            targets = names.compactMap { runners[$0] }
        } else {
            targets = runners.values.filter(\.isDeclared).sorted { $0.name < $1.name }
        }
        for runner in targets where runner.settings.paused != paused {
            var settings = runner.settings
            settings.paused = paused
            try storeCall { try store.save(settings) }
            runner.settings = settings
        }
        let infos = targets.map { info(of: $0) }
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
