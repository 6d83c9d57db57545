import OrchestratorAPI

extension SchedulerError {
    /// The Varlink error this refusal is sent as (`io.orchd.Jobs.varlink`).
    var varlinkError: VarlinkError {
        switch self {
        case .noSuchJob(let id): JobsInterface.noSuchJob(id)
        case .alreadyFinished(let id): JobsInterface.alreadyFinished(id)
        case .permissionDenied(let id): JobsInterface.permissionDenied(id)
        case .invalidSpec(let error): JobsInterface.invalidJobSpec(error.message)
        case .notFinished(let id): JobsInterface.notFinished(id)
        case .dependencyNotSucceeded(let id, let dependency, let result):
            JobsInterface.dependencyNotSucceeded(id, dependency: dependency, result: result?.name)
        case .duplicate(let id, let key): JobsInterface.duplicateJob(id, uniqueKey: key)
        case .noSuchQueue(let name): QueuesInterface.noSuchQueue(name)
        case .invalidSetting(let message): QueuesInterface.invalidSetting(message)
        case .storage(let message): JobsInterface.storageFailure(message)
        case .invalidTransition: JobsInterface.storageFailure(description)
        case .storageFull(let directory, let free):
            JobsInterface.storageFull(stateDirectory: directory, freeBytes: free, message: description)
        case .databaseLocked(let path): JobsInterface.databaseLocked(path: path, message: description)
        case .stopping: JobsInterface.stopping(message: description)
        case .unknownQueue(let name, let known, let asFilter): JobsInterface.unknownQueue(name, known: known, suggestingAdd: !asFilter)
        case .queueExists(let name): QueuesInterface.queueExists(name, message: description)
        case .queueNotRemovable(let name, _): QueuesInterface.queueNotRemovable(name, message: description)
        case .alreadyStarted(let id, _): JobsInterface.alreadyStarted(id, message: description)
        case .notRunning(let id, _): JobsInterface.notRunning(id, message: description)
        case .suspendFailed(let id, _): JobsInterface.suspendFailed(id, message: description)
        case .partlyCancelled(_, let cause):
            switch cause {
            case .storageFull(let directory, let free): JobsInterface.storageFull(stateDirectory: directory, freeBytes: free, message: description)
            case .databaseLocked(let path): JobsInterface.databaseLocked(path: path, message: description, partial: true)
            default: JobsInterface.storageFailure(description)
            }
        case .endKept(let ends, let cause):
            // The cause's error, so a client tells a full disk from a lock, with the whole story;
            // a lock's names the ends kept, so that the call is not made again as if nothing
            // had changed.
            switch cause {
            case .storageFull(let directory, let free): JobsInterface.storageFull(stateDirectory: directory, freeBytes: free, message: description)
            case .databaseLocked(let path): JobsInterface.databaseLocked(path: path, message: description, endsKept: ends.map(\.id))
            default: JobsInterface.storageFailure(description)
            }
        }
    }
}

extension VarlinkResponder {
    /// Replies with the scheduler's answer, mapping a refusal to its Varlink error.
    func complete<T: Sendable, P: Codable & Sendable>(_ result: Result<T, SchedulerError>, _ reply: (T) -> P) {
        switch result {
        case .success(let value): self.reply(reply(value))
        case .failure(let error): fail(error.varlinkError)
        }
    }

    /// Runs a scheduler request on the scheduler's actor (reached in a task of its own that
    /// prefers ``Scheduler/requestExecutor``, so it is one turn of the control queue) that
    /// answers through a callback, and sends the value it reports through `reply`, or its error.
    /// The reply leaves from wherever the request calls back: no turn of the queue to resume
    /// in.
    func complete<T: Sendable, P: Codable & Sendable>(
        on scheduler: Scheduler,
        _ request: @escaping @Sendable (isolated Scheduler, _ done: @escaping @Sendable (Result<T, SchedulerError>) -> Void) -> Void,
        reply: @escaping @Sendable (T) -> P
    ) {
        let responder = self
        Task(executorPreference: scheduler.requestExecutor) {
            await request(scheduler) { responder.complete($0, reply) }
        }
    }

    /// Runs a scheduler request in a task of its own and sends its value through `reply`, or
    /// its error.
    func complete<T: Sendable, P: Codable & Sendable>(
        _ request: @escaping @Sendable () async throws(SchedulerError) -> T, _ reply: @escaping @Sendable (T) -> P
    ) {
        Task {
            do throws(SchedulerError) {
                self.reply(reply(try await request()))
            } catch {
                fail(error.varlinkError)
            }
        }
    }

    /// Runs a scheduler request that answers with jobs (`Wait`, `Cancel`, `CancelMatching`)
    /// in a task of its own, and sends them: in pages (``JobPageStream``) when the call has
    /// `more`, so no reply outgrows a client's message cap however many jobs there are, else
    /// in one `JobsReply`; or its error.
    func completeWithJobs(_ request: @escaping @Sendable () async throws(SchedulerError) -> [Job]) {
        Task {
            do throws(SchedulerError) {
                let jobs = try await request()
                if more { JobPageStream.stream(jobs, to: self) } else { reply(JobsInterface.JobsReply(jobs: jobs)) }
            } catch {
                fail(error.varlinkError)
            }
        }
    }
}
