import OrchestratorAPI

/// Why the scheduler refused a request. Only the Varlink handlers turn these into wire errors.
public enum SchedulerError: Error, Sendable, CustomStringConvertible {
    /// No job has this ID.
    case noSuchJob(JobID)
    /// The job has already finished, so it cannot be cancelled.
    case alreadyFinished(JobID)
    /// Only a finished job can be retried.
    case notFinished(JobID)
    /// The job cannot be retried: this dependency finished with this result (not
    /// succeeded), or was pruned (`nil`).
    case dependencyNotSucceeded(JobID, dependency: JobID, result: JobResult?)
    /// The caller is neither root nor the job's submitter.
    case permissionDenied(JobID)
    /// The spec breaks a rule.
    case invalidSpec(JobSpecError)
    /// A live job already holds this unique key.
    case duplicate(JobID, uniqueKey: String)
    /// No job or setting names this queue.
    case noSuchQueue(QueueName)
    /// A queue setting is out of range.
    case invalidSetting(String)
    /// The operation does not apply to the job in its state (an internal race; nothing was
    /// changed).
    case invalidTransition(JobID, state: String, operation: String)
    /// The store refused the change; nothing was changed. The text is the store's error.
    case storage(String)
    /// The file system of the state directory is full; nothing was changed.
    case storageFull(stateDirectory: String, freeBytes: UInt64)
    /// Another process held a lock on the database for longer than the busy timeout;
    /// nothing was changed.
    case databaseLocked(path: String)
    /// No queue of this name is declared (`queue add`, the configuration file, `default`).
    /// `asFilter`: the name was a filter (`cancel --queue`, `events --queue`), where adding
    /// the queue is no help, so the message does not suggest it.
    case unknownQueue(QueueName, known: [QueueName], asFilter: Bool = false)
    /// A queue of this name is declared already (`queue add`).
    case queueExists(QueueName)
    /// The queue cannot be removed: it still has unfinished jobs, or it is `default`.
    case queueNotRemovable(QueueName, reason: String)
    /// The job has started, so it can no longer be held, released or edited
    /// (`operation`: "held", "edited", ...).
    case alreadyStarted(JobID, operation: String)
    /// The job is not running, so it cannot be suspended or continued.
    case notRunning(JobID, operation: String)
    /// The job's processes could not be stopped or continued; the text says why.
    case suspendFailed(JobID, String)
    /// The daemon is stopping and takes no new jobs; nothing was stored.
    case stopping
    /// A cancel's job ended, but the store refused its end (`cause`: a full disk, a locked
    /// database); orchd keeps it and records it once the store takes writes again.
    indirect case endKept([(id: JobID, result: JobResult)], cause: SchedulerError)
    /// A cancel had cancelled these jobs (or begun their teardown) when the store refused the
    /// rest (`cause`); the others named were not cancelled.
    indirect case partlyCancelled([JobID], cause: SchedulerError)

    /// Why the store refused a write, in a few words (`the file system of ... is full (N
    /// bytes free)`), for a message that goes on to say what happens next.
    var refusalReason: String {
        switch self {
        case .storageFull(let directory, let free): "the file system of the state directory \(directory) is full (\(free) bytes free)"
        case .databaseLocked(let path): "the job database \(path) is locked by another process"
        default: description
        }
    }

    /// Whether the store refused the write (its error, a full disk, a locked database):
    /// worth trying again once it takes writes, unlike a refusal of the request itself.
    var isStoreRefusal: Bool {
        switch self {
        case .storage, .storageFull, .databaseLocked: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .noSuchJob(let id): "no job with ID \(id)"
        case .alreadyFinished(let id): "job \(id) has already finished"
        case .notFinished(let id): "job \(id) has not finished"
        case .dependencyNotSucceeded(let id, let dependency, let result):
            JobsInterface.dependencyNotSucceeded(id, dependency: dependency, result: result?.name).description
        case .permissionDenied(let id): "job \(id) belongs to another user"
        case .invalidSpec(let error): "invalid job: \(error.message)"
        case .duplicate(let id, let key): JobsInterface.duplicateJob(id, uniqueKey: key).description
        case .noSuchQueue(let name): "no queue named '\(name)'"
        case .invalidSetting(let message): message
        case .invalidTransition(let id, let state, let operation): "job \(id) is \(state): \(operation) does not apply"
        case .storage(let message): "storage failure: \(message)"
        case .storageFull(let directory, let free):
            "the file system of the state directory \(directory) is full (\(free) bytes free), so nothing was stored; free space there and try again"
        case .unknownQueue(let name, let known, let asFilter): JobsInterface.unknownQueue(name, known: known, suggestingAdd: !asFilter).description
        case .queueExists(let name): "a queue named '\(name)' exists already; change its settings with 'orchctl queue set \(name)'"
        case .queueNotRemovable(let name, let reason): "queue '\(name)' cannot be removed: \(reason)"
        case .alreadyStarted(let id, let operation): "job \(id) has already started, so it cannot be \(operation)"
        case .notRunning(let id, let operation): "job \(id) is not running, so it cannot be \(operation)"
        case .suspendFailed(let id, let reason): "cannot stop or continue the processes of job \(id): \(reason)"
        case .stopping: "orchd is stopping and takes no new jobs, so nothing was stored; submit again once it runs"
        case .databaseLocked(let path):
            "the job database \(path) is locked by another process, so nothing was stored; try again once it lets go (a sqlite3 shell left open on it?)"
        case .partlyCancelled(let done, let cause):
            (done.count == 1 ? "job \(done[0]) was cancelled" : "\(done.count) jobs were cancelled")
                + " (a running job's processes are being stopped) before the store refused the rest: \(cause.refusalReason); "
                + "nothing else was cancelled, so cancel the others again once it takes writes"
        case .endKept(let ends, let cause):
            ends.count == 1
                ? "job \(ends[0].id) ended (\(ends[0].result.name)), but its end cannot be recorded now: \(cause.refusalReason); "
                    + "orchd keeps it and records it once the database takes writes again ('orchctl wait \(ends[0].id)' returns then)"
                : "jobs \(ends.map { "\($0.id) (\($0.result.name))" }.joined(separator: ", ")) ended, but their ends cannot be recorded now: "
                    + "\(cause.refusalReason); orchd keeps them and records them once the database takes writes again "
                    + "('orchctl wait \(ends.map(\.id.description).joined(separator: " "))' returns then); any other job named was cancelled"
        }
    }
}
