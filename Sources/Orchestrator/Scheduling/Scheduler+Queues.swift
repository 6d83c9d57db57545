import Foundation
import OrchestratorAPI

// MARK: - Queue management

extension Scheduler {
    /// Every queue that has jobs or settings, by name.
    public func queues(completion: @escaping @Sendable ([QueueInfo]) -> Void) {
        controlQueue.async { [self] in
            completion(runners.values.map { $0.info(default: configuration.retryPolicy) }.sorted { $0.name < $1.name })
        }
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
    ///   - completion: the queue as now set, or `invalidSetting`.
    public func setQueue(
        _ name: QueueName, concurrency: Int?, retryBase: Duration?, retryCap: Duration?, hooks: [String: String]? = nil,
        completion: @escaping @Sendable (Result<QueueInfo, SchedulerError>) -> Void
    ) {
        if let concurrency, !(1...10_000).contains(concurrency) {
            completion(.failure(.invalidSetting("concurrency must be from 1 to 10000, not \(concurrency)")))
            return
        }
        if let retryBase, retryBase <= .zero {
            completion(.failure(.invalidSetting("the retry base must be longer than zero")))
            return
        }
        if let retryCap, retryCap <= .zero {
            completion(.failure(.invalidSetting("the retry cap must be longer than zero")))
            return
        }
        if let unknown = hooks?.keys.first(where: { !QueuesInterface.hookEvents.contains($0) }) {
            completion(.failure(.invalidSetting(
                "no hook event '\(unknown)'; one of \(QueuesInterface.hookEvents.sorted().joined(separator: ", "))")))
            return
        }
        controlQueue.async { [self] in
            let runner = runner(for: name)
            var settings = runner.settings
            for (event, command) in hooks ?? [:] {
                settings.hooks[event] = command.isEmpty ? nil : command
            }
            if let concurrency { settings.concurrency = concurrency }
            if let retryBase { settings.retryBaseUSec = Int64(retryBase.timeInterval * 1_000_000) }
            if let retryCap { settings.retryCapUSec = Int64(retryCap.timeInterval * 1_000_000) }
            do {
                try store.save(settings)
            } catch {
                completion(.failure(storageError(error)))
                return
            }
            runner.settings = settings
            runner.concurrency = settings.concurrency ?? configuration.concurrency
            let info = runner.info(default: configuration.retryPolicy)
            groupCommit.afterDurable { completion(.success(info)) }
            feed(runner)
        }
    }

    /// Pauses or resumes queues: a paused queue starts nothing new; running jobs go on.
    /// - Parameters:
    ///   - names: the queues; `nil` for every queue.
    ///   - paused: pause (`true`) or resume (`false`).
    ///   - completion: the queues as now set, or `noSuchQueue` (then nothing changed).
    public func setPaused(
        _ names: [QueueName]?, paused: Bool, completion: @escaping @Sendable (Result<[QueueInfo], SchedulerError>) -> Void
    ) {
        controlQueue.async { [self] in
            let targets: [QueueRunner]
            if let names {
                if let unknown = names.first(where: { runners[$0] == nil }) {
                    completion(.failure(.noSuchQueue(unknown)))
                    return
                }
                targets = names.compactMap { runners[$0] }
            } else {
                targets = runners.values.sorted { $0.name < $1.name }
            }
            for runner in targets where runner.settings.paused != paused {
                var settings = runner.settings
                settings.paused = paused
                do {
                    try store.save(settings)
                } catch {
                    completion(.failure(storageError(error)))
                    return
                }
                runner.settings = settings
            }
            let infos = targets.map { $0.info(default: configuration.retryPolicy) }
            groupCommit.afterDurable { completion(.success(infos)) }
            if !paused { targets.forEach(feed) }
        }
    }

    /// A queue's hook commands by event kind. Call on the control queue.
    func hooks(of name: QueueName) -> [String: String] {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        return runners[name]?.settings.hooks ?? [:]
    }

    /// A job as stored, or `nil`. Call on the control queue.
    func storedJob(_ id: JobID) -> Job? {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        return try? store.job(id)
    }
}
