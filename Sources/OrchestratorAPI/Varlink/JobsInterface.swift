import FoundationEssentials

/// Parameter and reply types of the `io.orchd.Jobs` interface; `io.orchd.Jobs.varlink` is the
/// interface description that documents each field.
public enum JobsInterface {
    /// The name.
    public static let name = "io.orchd.Jobs"

    /// The errors a change of stored state may meet: nothing was changed.
    private static let storage = [Errors.storageFailure, Errors.storageFull, Errors.databaseLocked]

    /// `Submit(spec, reuseExisting) -> (job, existing)`.
    public static let submit = VarlinkMethod<SubmitParameters, JobReply>(
        "io.orchd.Jobs.Submit", errors: [Errors.invalidJobSpec, Errors.duplicateJob, Errors.unknownQueue, Errors.stopping, Errors.permissionDenied] + storage,
        writeParameters: { $0.writeJSON(to: &$1) }, readReply: JobReply.read)
    /// `SubmitBatch(specs, environment, returnJobs) -> (ids, jobs)`.
    public static let submitBatch = VarlinkMethod<SubmitBatchParameters, SubmitBatchReply>(
        "io.orchd.Jobs.SubmitBatch", errors: [Errors.invalidJobSpec, Errors.duplicateJob, Errors.unknownQueue, Errors.stopping, Errors.permissionDenied] + storage,
        writeParameters: { $0.writeJSON(to: &$1) })
    /// `Get(id) -> (job, attempts)`.
    public static let get = VarlinkMethod<GetParameters, JobReply>(
        "io.orchd.Jobs.Get", errors: [Errors.noSuchJob, Errors.permissionDenied] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobReply.read)
    /// `List(ids, queue, state, limit) -> (jobs)`; with `more`, in pages.
    public static let list = VarlinkMethod<ListParameters, JobsReply>(
        "io.orchd.Jobs.List", errors: storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobsReply.read)
    /// `Cancel(ids, signal) -> (jobs)`.
    public static let cancel = VarlinkMethod<CancelParameters, JobsReply>(
        "io.orchd.Jobs.Cancel", errors: [Errors.noSuchJob, Errors.alreadyFinished, Errors.permissionDenied] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobsReply.read)
    /// `CancelMatching(queue, state, signal) -> (jobs)`.
    public static let cancelMatching = VarlinkMethod<CancelMatchingParameters, JobsReply>(
        "io.orchd.Jobs.CancelMatching", errors: [Errors.permissionDenied] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobsReply.read)
    /// `Retry(id) -> (job)`.
    public static let retry = VarlinkMethod<GetParameters, JobReply>(
        "io.orchd.Jobs.Retry",
        errors: [Errors.noSuchJob, Errors.permissionDenied, Errors.notFinished, Errors.duplicateJob, Errors.dependencyNotSucceeded,
                 Errors.invalidJobSpec, Errors.unknownQueue] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobReply.read)
    /// `RetryFailed(queue) -> (jobs, refused)`.
    public static let retryFailed = VarlinkMethod<RetryFailedParameters, RetryFailedReply>(
        "io.orchd.Jobs.RetryFailed", errors: storage, writeParameters: { $0.writeJSON(to: &$1) })
    /// `Hold(ids) -> (jobs)`.
    public static let hold = VarlinkMethod<IDsParameters, JobsReply>(
        "io.orchd.Jobs.Hold", errors: [Errors.noSuchJob, Errors.permissionDenied, Errors.alreadyStarted, Errors.alreadyFinished] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobsReply.read)
    /// `Release(ids) -> (jobs)`.
    public static let release = VarlinkMethod<IDsParameters, JobsReply>(
        "io.orchd.Jobs.Release", errors: [Errors.noSuchJob, Errors.permissionDenied, Errors.alreadyStarted, Errors.alreadyFinished] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobsReply.read)
    /// `Edit(id, priority, queue, notBefore, name) -> (job)`.
    public static let edit = VarlinkMethod<EditParameters, JobReply>(
        "io.orchd.Jobs.Edit",
        errors: [Errors.noSuchJob, Errors.permissionDenied, Errors.alreadyStarted, Errors.alreadyFinished, Errors.invalidJobSpec,
                 Errors.unknownQueue] + storage,
        readReply: JobReply.read)
    /// `Suspend(id) -> (job)`.
    public static let suspend = VarlinkMethod<GetParameters, JobReply>(
        "io.orchd.Jobs.Suspend",
        errors: [Errors.noSuchJob, Errors.permissionDenied, Errors.notRunning, Errors.alreadyFinished, Errors.suspendFailed] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobReply.read)
    /// `Continue(id) -> (job)`.
    public static let resume = VarlinkMethod<GetParameters, JobReply>(
        "io.orchd.Jobs.Continue",
        errors: [Errors.noSuchJob, Errors.permissionDenied, Errors.notRunning, Errors.alreadyFinished, Errors.suspendFailed] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobReply.read)
    /// `Prune(olderThanUSec) -> (pruned)`.
    public static let prune = VarlinkMethod<PruneParameters, PruneReply>(
        "io.orchd.Jobs.Prune", errors: storage,
        writeParameters: { $0.writeJSON(to: &$1) })
    /// `Wait(ids) -> (jobs)`; with `more`, in pages.
    public static let wait = VarlinkMethod<IDsParameters, JobsReply>(
        "io.orchd.Jobs.Wait", errors: [Errors.noSuchJob, Errors.permissionDenied] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: JobsReply.read)
    /// `Logs(id, stream, offset, tailLines, follow) -> (data, offset)`, only with `more`.
    public static let logs = VarlinkMethod<LogsParameters, LogsReply>(
        "io.orchd.Jobs.Logs", requiresMore: true, errors: [Errors.noSuchJob, Errors.permissionDenied, Errors.logMissing, Errors.noSuchAttempt] + storage,
        writeParameters: { $0.writeJSON(to: &$1) }, readReply: LogsReply.read)
    /// `Subscribe(since, follow, queue, jobId, resume) -> (event)`, only with `more`.
    public static let subscribe = VarlinkMethod<SubscribeParameters, EventReply>(
        "io.orchd.Jobs.Subscribe", requiresMore: true, errors: [Errors.subscriberTooSlow, Errors.unknownQueue, Errors.noSuchJob] + storage,
        writeParameters: { $0.writeJSON(to: &$1) },
        readReply: EventReply.read)
    /// Every method of the interface.
    public static let methods = [
        submit.erased, submitBatch.erased, get.erased, list.erased, cancel.erased, retry.erased, prune.erased, wait.erased,
        logs.erased, subscribe.erased, cancelMatching.erased, retryFailed.erased, hold.erased, release.erased, edit.erased,
        suspend.erased, resume.erased,
    ]

    /// The qualified names of the interface's errors.
    public enum Errors {
        public static let noSuchJob = "io.orchd.Jobs.NoSuchJob"
        public static let invalidJobSpec = "io.orchd.Jobs.InvalidJobSpec"
        public static let alreadyFinished = "io.orchd.Jobs.AlreadyFinished"
        public static let permissionDenied = "io.orchd.Jobs.PermissionDenied"
        public static let logMissing = "io.orchd.Jobs.LogMissing"
        public static let duplicateJob = "io.orchd.Jobs.DuplicateJob"
        public static let notFinished = "io.orchd.Jobs.NotFinished"
        public static let dependencyNotSucceeded = "io.orchd.Jobs.DependencyNotSucceeded"
        public static let storageFailure = "io.orchd.Jobs.StorageFailure"
        public static let storageFull = "io.orchd.Jobs.StorageFull"
        public static let databaseLocked = "io.orchd.Jobs.DatabaseLocked"
        public static let stopping = "io.orchd.Jobs.Stopping"
        public static let subscriberTooSlow = "io.orchd.Jobs.SubscriberTooSlow"
        public static let noSuchAttempt = "io.orchd.Jobs.NoSuchAttempt"
        public static let unknownQueue = "io.orchd.Jobs.UnknownQueue"
        public static let alreadyStarted = "io.orchd.Jobs.AlreadyStarted"
        public static let notRunning = "io.orchd.Jobs.NotRunning"
        public static let suspendFailed = "io.orchd.Jobs.SuspendFailed"
    }

    /// The signals `Cancel` and `CancelMatching` may send first instead of SIGTERM, by name
    /// without `SIG`, with their numbers on Linux (signal(7)). SIGSTOP and SIGCONT are left
    /// out: `Suspend` and `Continue` do that, and the job would not end.
    public static let cancelSignals: [String: Int32] = [
        "HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "ALRM": 14, "TERM": 15,
    ]

    /// The signal a name means (`INT`, `SIGINT`, `int`), or `nil` when it names none of
    /// ``cancelSignals``.
    public static func cancelSignal(named name: String) -> Int32? {
        var key = name.uppercased()
        if key.hasPrefix("SIG") { key.removeFirst(3) }
        return cancelSignals[key]
    }

    /// `Cancel(ids, signal) -> (jobs)`.
    public struct CancelParameters: Codable, Sendable {
        /// The job IDs.
        public var ids: [JobID]
        /// The signal sent first to a running job's processes instead of SIGTERM, by name
        /// (``cancelSignals``); SIGKILL follows after the grace period as usual.
        public var signal: String?
        /// Creates a value with every field given.
        public init(ids: [JobID], signal: String? = nil) {
            self.ids = ids
            self.signal = signal
        }
    }

    /// `CancelMatching(queue, state, signal) -> (jobs)`: cancels every job that has not
    /// finished and matches every filter given (at least one).
    public struct CancelMatchingParameters: Codable, Sendable {
        /// Only jobs of this queue.
        public var queue: QueueName?
        /// Only jobs in this state: `waiting`, `queued` or `running`.
        public var state: String?
        /// As ``CancelParameters/signal``.
        public var signal: String?
        /// Creates a value with every field given.
        public init(queue: QueueName? = nil, state: String? = nil, signal: String? = nil) {
            self.queue = queue
            self.state = state
            self.signal = signal
        }
    }

    /// `RetryFailed(queue) -> (jobs, refused)`: retries every job that finished failed (every
    /// unsuccessful result but a cancel), oldest first. Called with `more`, the refused come
    /// first, in replies with no jobs, then the jobs, in replies with none refused.
    public struct RetryFailedParameters: Codable, Sendable {
        /// Only jobs of this queue.
        public var queue: QueueName?
        /// Creates a value with every field given.
        public init(queue: QueueName? = nil) { self.queue = queue }
    }

    /// What `RetryFailed` did.
    public struct RetryFailedReply: Codable, Sendable {
        /// The jobs retried, as now stored.
        public var jobs: [Job]
        /// The failed jobs that could not be retried, and why.
        public var refused: [Refusal]
        /// Creates a value with every field given.
        public init(jobs: [Job], refused: [Refusal]) {
            self.jobs = jobs
            self.refused = refused
        }

        /// A job that was not retried.
        public struct Refusal: Codable, Sendable, Hashable {
            /// The job.
            public var id: JobID
            /// Why, as the single-job call's error would say.
            public var message: String
            /// Creates a value with every field given.
            public init(id: JobID, message: String) {
                self.id = id
                self.message = message
            }
        }
    }

    /// `Edit(id, priority, queue, notBefore, name) -> (job)`: changes a job that has not
    /// started; fields not given keep their value.
    public struct EditParameters: Codable, Sendable {
        /// The job.
        public var id: JobID
        /// The new priority.
        public var priority: Int?
        /// The new queue (a declared one).
        public var queue: QueueName?
        /// The new earliest start, RFC 3339.
        public var notBefore: String?
        /// The new name; empty removes it.
        public var name: String?
        /// Creates a value with every field given.
        public init(id: JobID, priority: Int? = nil, queue: QueueName? = nil, notBefore: String? = nil, name: String? = nil) {
            self.id = id
            self.priority = priority
            self.queue = queue
            self.notBefore = notBefore
            self.name = name
        }
    }

    /// `Submit(spec, reuseExisting) -> (job, existing)`: queue one job.
    public struct SubmitParameters: Codable, Sendable, JSONByteEncodable {
        /// What was submitted.
        public var spec: JobSpec
        /// When the spec's unique key belongs to a live job, reply with that job (and
        /// `existing: true`) instead of refusing with `DuplicateJob`.
        public var reuseExisting: Bool?
        /// Creates a value with every field given.
        public init(spec: JobSpec, reuseExisting: Bool? = nil) {
            self.spec = spec
            self.reuseExisting = reuseExisting
        }
        /// Writes what the synthesized `encode(to:)` encodes.
        public func writeJSON(to writer: inout JSONByteWriter) {
            writer.raw(#"{"spec":"#)
            writer.value(spec)
            if let reuseExisting { writer.raw(#","reuseExisting":"#); writer.bool(reuseExisting) }
            writer.raw("}")
        }
    }

    /// `SubmitBatch(specs, environment, returnJobs) -> (ids, jobs)`: queue many jobs in one
    /// transaction; all or none.
    public struct SubmitBatchParameters: Codable, Sendable, JSONByteEncodable {
        /// The jobs to submit, in order.
        public var specs: [JobSpec]
        /// The environment of every spec whose own is empty: sent once for the batch instead
        /// of once per job (a submitter's environment is kilobytes).
        public var environment: [String: String]?
        /// Also return the stored job objects (default: only their IDs, which is much cheaper).
        public var returnJobs: Bool?
        /// Creates a value with every field given.
        public init(specs: [JobSpec], environment: [String: String]? = nil, returnJobs: Bool? = nil) {
            self.specs = specs
            self.environment = environment
            self.returnJobs = returnJobs
        }

        /// Writes what the synthesized `encode(to:)` encodes (JSONEncoder was a quarter of
        /// `orchctl submit --batch`'s work for a line).
        public func writeJSON(to writer: inout JSONByteWriter) {
            writer.raw(#"{"specs":"#)
            writer.array(specs)
            if let environment { writer.raw(#","environment":"#); writer.object(environment) }
            if let returnJobs { writer.raw(#","returnJobs":"#); writer.bool(returnJobs) }
            writer.raw("}")
        }

        /// The specs with the batch environment filled in where theirs is empty.
        public var resolvedSpecs: [JobSpec] {
            guard let environment, !environment.isEmpty else { return specs }
            let shared = JobSpec.removingSupervisorVariables(environment)
            return specs.map { spec in
                var spec = spec
                if spec.environment.isEmpty { spec.environment = shared }
                return spec
            }
        }
    }

    /// The IDs of the jobs `SubmitBatch` stored, in the order of the specs, and the jobs
    /// themselves when asked for.
    public struct SubmitBatchReply: Codable, Sendable {
        /// The job IDs.
        public var ids: [JobID]
        /// The jobs.
        public var jobs: [Job]?
        /// Creates a value with every field given.
        public init(ids: [JobID], jobs: [Job]?) {
            self.ids = ids
            self.jobs = jobs
        }
    }

    /// `Prune(olderThanUSec) -> (pruned)`: delete finished jobs and their logs.
    public struct PruneParameters: Codable, Sendable {
        /// Only jobs finished at least this long ago, in microseconds (default: all finished).
        public var olderThanUSec: Int64?
        /// Creates a value with every field given.
        public init(olderThanUSec: Int64? = nil) { self.olderThanUSec = olderThanUSec }
    }

    /// How many jobs `Prune` deleted.
    public struct PruneReply: Codable, Sendable {
        public var pruned: Int
        /// Creates a value with every field given.
        public init(pruned: Int) { self.pruned = pruned }
    }

    /// `Get(id) -> (job)`.
    public struct GetParameters: Codable, Sendable {
        /// The job's ID.
        public var id: JobID
        /// Creates a value with every field given.
        public init(id: JobID) { self.id = id }
    }

    /// A ``JobReply`` read for the job's ID alone (``VarlinkMethod/decodingReply(as:)``).
    public struct JobIDReply: Codable, Sendable {
        /// The job, its ID only.
        public var job: IdentifiedJob
        /// A job as its ID.
        public struct IdentifiedJob: Codable, Sendable {
            /// The job's ID.
            public var id: JobID

            /// Reads `{"id": N, ...}` (other members skipped), or gives up (`nil`).
            static func read(_ reader: inout JSONByteReader) -> IdentifiedJob? {
                reader.member("id") { $0.integer() }.map { IdentifiedJob(id: JobID(rawValue: $0)) }
            }
        }

        /// Reads `{"job": {"id": N, ...}, ...}` as the `Decodable` conformance does (other
        /// members skipped), or gives up (`nil`) on anything else, a key given twice included.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobIDReply? {
            reader.member("job", IdentifiedJob.read).map(JobIDReply.init(job:))
        }
    }

    /// A reply carrying one job.
    public struct JobReply: Codable, Sendable {
        /// The job.
        public var job: Job
        /// `Submit` with `reuseExisting`: the job already existed.
        public var existing: Bool?
        /// `Get`: every finished attempt, oldest first.
        public var attempts: [JobAttempt]?
        /// Creates a value with every field given.
        public init(job: Job, existing: Bool? = nil, attempts: [JobAttempt]? = nil) {
            self.job = job
            self.existing = existing
            self.attempts = attempts
        }

        /// Reads `{"job": {...}, "existing": ..., "attempts": [...]}` as the `Decodable`
        /// conformance does (other members skipped), or gives up (`nil`) on anything else.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobReply? {
            var job: Job?, existing: Bool?, attempts: [JobAttempt]?
            let ok = reader.object { key, reader in
                switch key {
                case "job": return reader.required(&job, Job.read)
                case "existing": return reader.nullable(&existing) { $0.bool() }
                case "attempts": return reader.nullable(&attempts) { $0.list(JobAttempt.read) }
                default: return reader.skipValue()
                }
            }
            guard ok, let job else { return nil }
            return JobReply(job: job, existing: existing, attempts: attempts)
        }
    }

    /// `List(ids, queue, state, limit, result, labels) -> (jobs)`: jobs in ID order, filtered by every field
    /// given. With `more`, the jobs come in several replies of at most 1,000.
    public struct ListParameters: Codable, Sendable {
        /// The job IDs.
        public var ids: [JobID]?
        /// The queue it is about.
        public var queue: QueueName?
        /// `waiting`, `queued`, `running` or `finished`.
        public var state: String?
        /// Only the newest `limit` matching jobs (still listed in ID order).
        public var limit: Int?
        /// Every user's jobs, not only the caller's (a caller who is not an admin then gets
        /// other users' jobs with their owner, state and command only).
        public var allUsers: Bool?
        /// Only finished jobs with this result (one of ``JobResult/names``, e.g. `failed`).
        public var result: String?
        /// Only jobs carrying every one of these labels with these values.
        public var labels: [String: String]?
        /// Creates a value with every field given.
        public init(
            ids: [JobID]? = nil, queue: QueueName? = nil, state: String? = nil, limit: Int? = nil, allUsers: Bool? = nil,
            result: String? = nil, labels: [String: String]? = nil
        ) {
            self.ids = ids
            self.queue = queue
            self.state = state
            self.limit = limit
            self.allUsers = allUsers
            self.result = result
            self.labels = labels
        }
    }

    /// A ``JobsReply`` read for the jobs' IDs alone: what `wait --all` needs of `List`.
    public struct JobIDsReply: Codable, Sendable {
        /// The jobs, their IDs only.
        public var jobs: [JobIDReply.IdentifiedJob]

        /// Reads `{"jobs": [{"id": N, ...}, ...]}` as the `Decodable` conformance does (other
        /// members skipped), or gives up (`nil`) on anything else, a key given twice included.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobIDsReply? {
            reader.member("jobs") { $0.list(JobIDReply.IdentifiedJob.read) }.map(JobIDsReply.init(jobs:))
        }
    }

    /// A ``JobsReply`` read for each job's ID, state, earliest start, hold and queue alone:
    /// what `wait` needs of `List` to say which awaited jobs may not start for a while.
    public struct JobStartsReply: Codable, Sendable {
        /// The jobs, their ID, state, earliest start, hold and queue only.
        public var jobs: [JobStart]

        /// A job as its ID, state, earliest start, hold and queue.
        public struct JobStart: Codable, Sendable {
            /// The job's ID.
            public var id: JobID
            /// Its state's name (``JobState/name``); a finished job's result is not read.
            public var state: String
            /// Its earliest start (`--delay`, `--at`, a retry backoff), as ``JobSpec/notBefore``.
            public var notBefore: Date?
            /// Whether it is held (``Job/held``): it starts only once released.
            public var held: Bool
            /// Its queue (``JobSpec/queue``), which may be paused; `nil` when the reply had none.
            public var queue: QueueName?

            private enum CodingKeys: String, CodingKey { case id, state, notBefore, held, queue }

            /// Creates a value with every field given.
            public init(id: JobID, state: String, notBefore: Date?, held: Bool = false, queue: QueueName? = nil) {
                self.id = id
                self.state = state
                self.notBefore = notBefore
                self.held = held
                self.queue = queue
            }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                id = try c.decode(JobID.self, forKey: .id)
                state = try c.decode(String.self, forKey: .state)
                if let text = try c.decodeIfPresent(String.self, forKey: .notBefore) {
                    guard let date = Timestamp.parse(text) else {
                        throw DecodingError.dataCorruptedError(forKey: .notBefore, in: c, debugDescription: "not an RFC 3339 time: \(text)")
                    }
                    notBefore = date
                } else {
                    notBefore = nil
                }
                held = try c.decodeIfPresent(Bool.self, forKey: .held) ?? false
                queue = try c.decodeIfPresent(QueueName.self, forKey: .queue)
            }

            /// Encodes what a ``Job`` encodes of these fields.
            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encode(state, forKey: .state)
                try c.encode(notBefore.map(Timestamp.format), forKey: .notBefore)
                try c.encode(held, forKey: .held)
                try c.encodeIfPresent(queue, forKey: .queue)
            }
        }

        /// Reads `{"jobs": [{"id": N, "state": S, "notBefore": T, "held": B, "queue": Q, ...}, ...]}`
        /// as the `Decodable` conformance does (other members skipped), or gives up (`nil`): a key
        /// given twice, a number that does not fit, a time that is not RFC 3339, a queue name
        /// that is not one.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobStartsReply? {
            reader.member("jobs") { $0.list(readJob) }.map(JobStartsReply.init(jobs:))
        }

        /// Reads one job's `{"id": N, "state": S, "notBefore": T, "held": B, "queue": Q, ...}` as
        /// ``JobStart``'s `Decodable` conformance does, or gives up (`nil`).
        static func readJob(_ reader: inout JSONByteReader) -> JobStart? {
            var id: Int64?, state: String?, notBefore: Date?, held = false, queue: QueueName?
            let ok = reader.object { key, reader in
                switch key {
                case "id": id = reader.integer(); return id != nil
                case "state": state = reader.string(); return state != nil
                case "notBefore":
                    if reader.null() { return true }
                    notBefore = reader.string().flatMap(Timestamp.parse)
                    return notBefore != nil
                case "held":
                    guard let value = reader.bool() else { return false }
                    held = value
                    return true
                case "queue":
                    if reader.null() { return true }
                    queue = reader.string().flatMap(QueueName.init(rawValue:))
                    return queue != nil
                default: return reader.skipValue()
                }
            }
            guard ok, let id, let state else { return nil }
            return JobStart(id: JobID(rawValue: id), state: state, notBefore: notBefore, held: held, queue: queue)
        }
    }

    /// A ``JobReply`` read for the job's ID, state, earliest start, hold and queue alone: what
    /// `submit --wait` needs of `Submit`'s answer to say that the job waits in a paused queue.
    public struct JobStartReply: Codable, Sendable {
        /// The job, as its ID, state, earliest start, hold and queue.
        public var job: JobStartsReply.JobStart

        /// Reads `{"job": {...}, ...}` as the `Decodable` conformance does (other members
        /// skipped), or gives up (`nil`).
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobStartReply? {
            reader.member("job", JobStartsReply.readJob).map(JobStartReply.init(job:))
        }
    }

    /// A ``JobsReply`` read for each job's ID and state alone (``VarlinkMethod/decodingReply(as:reading:)``):
    /// what `submit --wait` needs of `Wait`'s answer.
    public struct JobEndsReply: Codable, Sendable {
        /// The jobs, their ID and state only.
        public var jobs: [JobEnd]

        /// A job as its ID and state.
        public struct JobEnd: Codable, Sendable {
            /// The job's ID.
            public var id: JobID
            /// Its state, with the result when finished.
            public var state: JobState

            private enum CodingKeys: String, CodingKey {
                case id, state, result, exitCode, signal, reason, failedDependency
            }

            init(id: JobID, state: JobState) {
                self.id = id
                self.state = state
            }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                id = try c.decode(JobID.self, forKey: .id)
                state = try JobState.decode(from: c, state: .state, result: .result, exitCode: .exitCode, signal: .signal,
                                            reason: .reason, failedDependency: .failedDependency)
            }

            /// Encodes what a ``Job`` encodes of its ID and state (for `--json` output of a narrow read).
            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encode(state.name, forKey: .state)
                if case .finished(let result) = state {
                    try c.encode(result.name, forKey: .result)
                    try c.encodeIfPresent(result.exitCode, forKey: .exitCode)
                    try c.encodeIfPresent(result.signal, forKey: .signal)
                    try c.encodeIfPresent(result.reason, forKey: .reason)
                    try c.encodeIfPresent(result.failedDependency, forKey: .failedDependency)
                }
            }
        }

        /// Reads `{"jobs": [{"id": N, "state": S, "result": R, ...}, ...]}` as the `Decodable`
        /// conformance does (other members skipped), or gives up (`nil`): a key given twice, a
        /// number that does not fit, an unknown state or result.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobEndsReply? {
            reader.member("jobs") { $0.list(readJob) }.map(JobEndsReply.init(jobs:))
        }

        private static func readJob(_ reader: inout JSONByteReader) -> JobEnd? {
            var id: Int64?, stateName: String?
            var members = JobResultMembers()
            let ok = reader.object { key, reader in
                if let taken = members.read(key, &reader) { return taken }
                switch key {
                case "id": return reader.required(&id) { $0.integer() }
                case "state": return reader.required(&stateName) { $0.string() }
                default: return reader.skipValue()
                }
            }
            guard ok, let id, let stateName, let state = members.state(named: stateName) else { return nil }
            return JobEnd(id: JobID(rawValue: id), state: state)
        }
    }


    /// A reply carrying several jobs.
    public struct JobsReply: Codable, Sendable {
        /// The jobs.
        public var jobs: [Job]
        /// Creates a value with every field given.
        public init(jobs: [Job]) { self.jobs = jobs }

        /// Reads `{"jobs": [...]}` as the `Decodable` conformance does (other members skipped),
        /// or gives up (`nil`) on anything else (``Job/read(_:)``).
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobsReply? {
            reader.member("jobs") { $0.list(Job.read) }.map(JobsReply.init(jobs:))
        }
    }

    /// `Cancel(ids) -> (jobs)` and `Wait(ids) -> (jobs)`.
    public struct IDsParameters: Codable, Sendable {
        /// The job IDs.
        public var ids: [JobID]
        /// Creates a value with every field given.
        public init(ids: [JobID]) { self.ids = ids }
    }

    /// Which captured output stream `Logs` reads.
    public enum LogStream: String, Codable, Sendable {
        case stdout, stderr
    }

    /// `Logs(id, stream, offset, tailLines, follow) -> (data, offset)`, called with `more`.
    public struct LogsParameters: Codable, Sendable {
        /// The job's ID.
        public var id: JobID
        /// Which output stream.
        public var stream: LogStream
        /// Where to start reading, in bytes from the start of the file (default 0). An offset
        /// past the end is the end.
        public var offset: Int64?
        /// Start where the last `tailLines` lines begin instead (0 or more; a final line
        /// without a newline counts). Not together with `offset`.
        public var tailLines: Int?
        /// After the output written so far, keep the stream open and send new output as the
        /// job writes it, until the job has finished and everything it wrote has been sent.
        /// Without `attempt`, each attempt of a retried job follows the one before, from its
        /// start; with `attempt`, the stream ends when that attempt has.
        public var follow: Bool?
        /// Which attempt's output, from 1 (default: the latest; for a job not started yet,
        /// its first). Each attempt has its own output.
        public var attempt: Int?
        /// Without `attempt`: start with this attempt's output (`offset` is in it) and go on
        /// with the later ones, as when following the latest. A client resuming after a
        /// reconnect sends the attempt its offset belongs to, so a retry meanwhile loses nothing.
        public var fromAttempt: Int?
        /// Creates a value with every field given.
        public init(
            id: JobID, stream: LogStream, offset: Int64? = nil, tailLines: Int? = nil, follow: Bool? = nil, attempt: Int? = nil,
            fromAttempt: Int? = nil
        ) {
            self.id = id
            self.stream = stream
            self.offset = offset
            self.tailLines = tailLines
            self.follow = follow
            self.attempt = attempt
            self.fromAttempt = fromAttempt
        }
    }

    /// One chunk of captured output.
    public struct LogsReply: Codable, Sendable {
        /// The bytes, base64-encoded (output is binary-safe).
        public var data: String
        /// The offset just past this chunk, in bytes, in the output of ``attempt``.
        public var offset: Int64
        /// The attempt whose output this is (a follower goes on from one attempt to the next).
        public var attempt: Int?
        /// Creates a value with every field given.
        public init(data: String, offset: Int64, attempt: Int? = nil) {
            self.data = data
            self.offset = offset
            self.attempt = attempt
        }

        /// Reads `{"data": "...", "offset": N, "attempt": N}` as the `Decodable` conformance
        /// does (other members skipped), or gives up (`nil`) on anything else.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> LogsReply? {
            var data: String?, offset: Int64?, attempt: Int64?
            let ok = reader.object { key, reader in
                switch key {
                case "data": return reader.required(&data) { $0.string() }
                case "offset": return reader.required(&offset) { $0.integer() }
                case "attempt": return reader.nullable(&attempt) { $0.integer() }
                default: return reader.skipValue()
                }
            }
            guard ok, let data, let offset else { return nil }
            return LogsReply(data: data, offset: offset, attempt: attempt.map { Int($0) })
        }
    }

    /// `Subscribe(since, follow, queue, jobId) -> (event)`, called with `more`: first every
    /// retained event after `since` that matches the filters, oldest first, then (with
    /// `follow`) each new one as it is committed. Without `follow` the last reply is the last
    /// retained event (or, when there is none, a reply without `event`).
    public struct SubscribeParameters: Codable, Sendable {
        /// Only events with a larger sequence number (default 0: every retained event).
        public var since: Int64?
        /// Keep the stream open for new events.
        public var follow: Bool?
        /// The queue it is about.
        public var queue: QueueName?
        /// The job it is about, if any.
        public var jobId: JobID?
        /// The client resumes a stream it was reading, after the last event it got (`since`),
        /// as `orchctl events --follow` does after a reconnect: the filters are not checked
        /// again, and events after `since` that retention dropped meanwhile end the call with
        /// `SubscriberTooSlow` instead of being skipped.
        public var resume: Bool?
        /// Creates a value with every field given.
        public init(since: Int64? = nil, follow: Bool? = nil, queue: QueueName? = nil, jobId: JobID? = nil, resume: Bool? = nil) {
            self.since = since
            self.follow = follow
            self.queue = queue
            self.jobId = jobId
            self.resume = resume
        }
    }

    /// One event of a `Subscribe` stream; `nil` only in the single reply of an empty backlog.
    public struct EventReply: Codable, Sendable {
        /// The event.
        public var event: Event?
        /// Creates a value with every field given.
        public init(event: Event?) { self.event = event }

        /// Reads `{"event": {...}}` (or no event: `null` or left out) as the `Decodable`
        /// conformance does (other members skipped), or gives up (`nil`) on anything else.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> EventReply? {
            var event: Event?
            let ok = reader.object { key, reader in
                guard key == "event" else { return reader.skipValue() }
                return reader.nullable(&event, Event.read)
            }
            return ok ? EventReply(event: event) : nil
        }
    }

    // MARK: - Errors

    /// `NoSuchJob(id)`: no job has that ID (or it was pruned).
    public static func noSuchJob(_ id: JobID) -> VarlinkError {
        VarlinkError(Errors.noSuchJob, ["id": .integer(id.rawValue), "message": .string("no job with ID \(id)")])
    }

    /// `InvalidJobSpec(message)`: the spec breaks a rule.
    public static func invalidJobSpec(_ message: String) -> VarlinkError {
        VarlinkError(Errors.invalidJobSpec, ["message": .string("invalid job: \(message)")])
    }

    /// `AlreadyFinished(id)`: the job cannot be cancelled; it already finished.
    public static func alreadyFinished(_ id: JobID) -> VarlinkError {
        VarlinkError(Errors.alreadyFinished, ["id": .integer(id.rawValue), "message": .string("job \(id) has already finished")])
    }

    /// `PermissionDenied(id)`: the job is another user's, and the caller is no admin.
    public static func permissionDenied(_ id: JobID) -> VarlinkError {
        VarlinkError(Errors.permissionDenied, ["id": .integer(id.rawValue), "message": .string("job \(id) belongs to another user")])
    }

    /// `StorageFailure(message)`: the database refused a change; nothing was changed.
    public static func storageFailure(_ message: String) -> VarlinkError {
        VarlinkError(Errors.storageFailure, ["message": .string("storage failure: \(message)")])
    }

    /// `LogMissing(path)`: the job's process was started, so its log file was created, but
    /// the file is gone (deleted or moved); its output is lost, which is not "no output".
    public static func logMissing(path: String) -> VarlinkError {
        VarlinkError(Errors.logMissing, [
            "path": .string(path),
            "message": .string("the log file \(path) is missing: the job started, so it was deleted or moved since, and its output is lost"),
        ])
    }

    /// `StorageFull(stateDirectory, freeBytes, message)`: the file system of the state
    /// directory is full; nothing was changed.
    public static func storageFull(stateDirectory: String, freeBytes: UInt64, message: String) -> VarlinkError {
        VarlinkError(Errors.storageFull, [
            "stateDirectory": .string(stateDirectory), "freeBytes": .integer(Int64(clamping: freeBytes)), "message": .string(message),
        ])
    }

    /// `DatabaseLocked(path, message, endsKept)`: another process held the database's lock
    /// past orchd's busy timeout (0.1 s once running); nothing was changed, so the call may be
    /// made again, unless `endsKept` is given: a cancel ended those jobs, and their ends are
    /// kept until the database takes writes again.
    /// - Parameters:
    ///   - endsKept: the jobs whose ends are kept; `nil` when nothing was changed.
    ///   - partial: the call did part of its work first (a cancel of running jobs, or of many
    ///     in turns), so it is not to be made again as if nothing had changed.
    public static func databaseLocked(path: String, message: String, endsKept: [JobID]? = nil, partial: Bool = false) -> VarlinkError {
        var parameters: [String: JSONValue] = ["path": .string(path), "message": .string(message)]
        if let endsKept { parameters["endsKept"] = .array(endsKept.map { .integer($0.rawValue) }) }
        if partial { parameters["partial"] = .bool(true) }
        return VarlinkError(Errors.databaseLocked, parameters)
    }

    /// `Stopping(message)`: orchd is stopping and takes no new jobs; nothing was stored.
    public static func stopping(message: String) -> VarlinkError {
        VarlinkError(Errors.stopping, ["message": .string(message)])
    }

    /// `DuplicateJob(id, uniqueKey)`: a live job already has this unique key.
    public static func duplicateJob(_ id: JobID, uniqueKey: String) -> VarlinkError {
        VarlinkError(Errors.duplicateJob, [
            "id": .integer(id.rawValue), "uniqueKey": .string(uniqueKey),
            "message": .string("job \(id) with unique key '\(uniqueKey)' has not finished yet (wait for it: orchctl wait \(id); a submit with --reuse answers with its ID instead)"),
        ])
    }

    /// `NotFinished(id)`: only a finished job can be retried.
    public static func notFinished(_ id: JobID) -> VarlinkError {
        VarlinkError(Errors.notFinished, ["id": .integer(id.rawValue), "message": .string("job \(id) has not finished; only a finished job can be retried")])
    }

    /// `DependencyNotSucceeded(id, dependency, result)`: a job cannot be retried because a
    /// job it depends on finished without succeeding (`result`), or was pruned (`result`
    /// null), so it could never start.
    public static func dependencyNotSucceeded(_ id: JobID, dependency: JobID, result: String?) -> VarlinkError {
        let why = result.map { "finished \($0)" } ?? "was pruned, so whether it succeeded is unknown"
        var parameters: [String: JSONValue] = [
            "id": .integer(id.rawValue), "dependency": .integer(dependency.rawValue),
            "message": .string("job \(id) cannot be retried: its dependency, job \(dependency), \(why)"
                + (result == nil ? "" : "; retry job \(dependency) first")),
        ]
        if let result { parameters["result"] = .string(result) }
        return VarlinkError(Errors.dependencyNotSucceeded, parameters)
    }

    /// `NoSuchAttempt(id, attempt, attempts)`: the job has not made that attempt; it has
    /// started `attempts` so far.
    public static func noSuchAttempt(_ id: JobID, attempt: Int, attempts: Int) -> VarlinkError {
        let has = attempts == 0 ? "it has not started yet" : attempts == 1 ? "it has made 1 attempt" : "its attempts are 1 to \(attempts)"
        return VarlinkError(Errors.noSuchAttempt, [
            "id": .integer(id.rawValue), "attempt": .integer(Int64(attempt)), "attempts": .integer(Int64(attempts)),
            "message": .string("job \(id) has no attempt \(attempt): \(has)"),
        ])
    }

    /// `UnknownQueue(name, known, message)`: no queue of this name is declared; `known`
    /// lists those that are. `suggestingAdd`: the message says how to add it (for a queue a
    /// job was to go to, not for a filter).
    public static func unknownQueue(_ name: QueueName, known: [QueueName], suggestingAdd: Bool = true) -> VarlinkError {
        VarlinkError(Errors.unknownQueue, [
            "name": .string(name.rawValue), "known": .array(known.map { .string($0.rawValue) }),
            "message": .string("no queue named '\(name)'; the queues are \(known.map(\.rawValue).joined(separator: ", "))"
                + (suggestingAdd ? " (add one with 'orchctl queue add \(name)')" : "")),
        ])
    }

    /// `AlreadyStarted(id, message)`: the job has started, so it cannot be held, released or
    /// edited.
    public static func alreadyStarted(_ id: JobID, message: String) -> VarlinkError {
        VarlinkError(Errors.alreadyStarted, ["id": .integer(id.rawValue), "message": .string(message)])
    }

    /// `NotRunning(id, message)`: the job is not running, so it cannot be suspended or
    /// continued.
    public static func notRunning(_ id: JobID, message: String) -> VarlinkError {
        VarlinkError(Errors.notRunning, ["id": .integer(id.rawValue), "message": .string(message)])
    }

    /// `SuspendFailed(id, message)`: the job's processes could not be stopped or continued.
    public static func suspendFailed(_ id: JobID, message: String) -> VarlinkError {
        VarlinkError(Errors.suspendFailed, ["id": .integer(id.rawValue), "message": .string(message)])
    }

    /// `SubscriberTooSlow(message)`: a `Subscribe` stream ended because its client fell so far
    /// behind that the event log's retention trimmed events it had not been sent; it can
    /// subscribe again with `since` set to the last event it processed (those events are gone).
    public static func subscriberTooSlow(lastSeen: Int64?) -> VarlinkError {
        VarlinkError(Errors.subscriberTooSlow, [
            "message": .string("the event stream fell so far behind that the event log's retention (--event-retention) dropped events it had not sent yet; resume with --since \(lastSeen.map(String.init) ?? "the last event seen") to go on without them"),
        ])
    }

}
