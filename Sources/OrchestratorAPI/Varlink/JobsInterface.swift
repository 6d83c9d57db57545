/// Parameter and reply types of the `io.orchd.Jobs` interface; `io.orchd.Jobs.varlink` is the
/// interface description that documents each field.
public enum JobsInterface {
    public static let name = "io.orchd.Jobs"

    /// `Submit(spec) -> (job)`: queue one job.
    public struct SubmitParameters: Codable, Sendable {
        public var spec: JobSpec
        public init(spec: JobSpec) { self.spec = spec }
    }

    /// `Get(id) -> (job)`.
    public struct GetParameters: Codable, Sendable {
        public var id: JobID
        public init(id: JobID) { self.id = id }
    }

    /// A reply carrying one job.
    public struct JobReply: Codable, Sendable {
        public var job: Job
        public init(job: Job) { self.job = job }
    }

    /// `List(ids, queue, state) -> (jobs)`: jobs in ID order, filtered by every field given.
    public struct ListParameters: Codable, Sendable {
        public var ids: [JobID]?
        public var queue: QueueName?
        /// `waiting`, `queued`, `running` or `finished`.
        public var state: String?
        public init(ids: [JobID]? = nil, queue: QueueName? = nil, state: String? = nil) {
            self.ids = ids
            self.queue = queue
            self.state = state
        }
    }

    /// A reply carrying several jobs.
    public struct JobsReply: Codable, Sendable {
        public var jobs: [Job]
        public init(jobs: [Job]) { self.jobs = jobs }
    }

    /// `Cancel(ids) -> (jobs)` and `Wait(ids) -> (jobs)`.
    public struct IDsParameters: Codable, Sendable {
        public var ids: [JobID]
        public init(ids: [JobID]) { self.ids = ids }
    }

    /// Which captured output stream `Logs` reads.
    public enum LogStream: String, Codable, Sendable {
        case stdout, stderr
    }

    /// `Logs(id, stream, offset) -> (data, offset)`, called with `more`.
    public struct LogsParameters: Codable, Sendable {
        public var id: JobID
        public var stream: LogStream
        /// Where to start reading, in bytes from the start of the file (default 0).
        public var offset: Int64?
        public init(id: JobID, stream: LogStream, offset: Int64? = nil) {
            self.id = id
            self.stream = stream
            self.offset = offset
        }
    }

    /// One chunk of captured output.
    public struct LogsReply: Codable, Sendable {
        /// The bytes, base64-encoded (output is binary-safe).
        public var data: String
        /// The offset just past this chunk, in bytes.
        public var offset: Int64
        public init(data: String, offset: Int64) {
            self.data = data
            self.offset = offset
        }
    }

    // MARK: - Errors

    /// `NoSuchJob(id)`: no job has that ID (or it was pruned).
    public static func noSuchJob(_ id: JobID) -> VarlinkError {
        VarlinkError("io.orchd.Jobs.NoSuchJob", ["id": .number(Double(id.rawValue)), "message": .string("no job with ID \(id)")])
    }

    /// `InvalidJobSpec(message)`: the spec breaks a rule.
    public static func invalidJobSpec(_ message: String) -> VarlinkError {
        VarlinkError("io.orchd.Jobs.InvalidJobSpec", ["message": .string("invalid job: \(message)")])
    }

    /// `AlreadyFinished(id)`: the job cannot be cancelled; it already finished.
    public static func alreadyFinished(_ id: JobID) -> VarlinkError {
        VarlinkError("io.orchd.Jobs.AlreadyFinished", ["id": .number(Double(id.rawValue)), "message": .string("job \(id) has already finished")])
    }

    /// `NotPermitted(id)`: only root or the submitter may change another user's job.
    public static func notPermitted(_ id: JobID) -> VarlinkError {
        VarlinkError("io.orchd.Jobs.NotPermitted", ["id": .number(Double(id.rawValue)), "message": .string("job \(id) belongs to another user")])
    }

    /// `StorageFailure(message)`: the database refused a change; nothing was changed.
    public static func storageFailure(_ message: String) -> VarlinkError {
        VarlinkError("io.orchd.Jobs.StorageFailure", ["message": .string("storage failure: \(message)")])
    }

    /// `ShuttingDown()`: the daemon is stopping and takes no new work.
    public static func shuttingDown() -> VarlinkError {
        VarlinkError("io.orchd.Jobs.ShuttingDown", ["message": .string("orchd is shutting down")])
    }
}
