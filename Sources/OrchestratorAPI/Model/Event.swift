import FoundationEssentials

/// One lifecycle event, as stored in the event log and streamed by `orchctl events`.
///
/// JSON: `seq, at, kind, jobId, queue, state, previousState, result, exitCode, signal,
/// attempt, ownerUid` (RFC 3339 `at`; fields that do not apply are `null`). Kinds are snake_case:
/// `submitted`, `queued` (a waiting job became eligible), `started`, `retrying`, `requeued`,
/// `finished`, `cancelled`, `queue_paused`, `queue_resumed`, `queue_drained`,
/// `daemon_ready`, `daemon_stopping`.
public struct Event: Hashable, Sendable, Codable {
    /// The sequence number: increases by at least one per event, never reused.
    public var seq: Int64
    /// When it happened.
    public var at: Date
    /// The kind (its snake_case names are listed with the type).
    public var kind: EventKind
    /// The job it is about, if any.
    public var jobId: JobID?
    /// The queue it is about.
    public var queue: QueueName?
    /// The job's state after the event.
    public var state: String?
    /// The job's state before the event.
    public var previousState: String?
    /// For `finished` and `cancelled` (and `retrying`: the failed attempt's result).
    public var result: String?
    /// The exit status, when the process exited.
    public var exitCode: Int32?
    /// The signal that ended the process, if one did.
    public var signal: Int32?
    /// The job's attempt number.
    public var attempt: Int?
    /// The uid of the job's owner (its submitter); `nil` for an event of no job, or of a job
    /// pruned before the event was read.
    public var ownerUid: UInt32?

    /// Creates a value with every field given.
    public init(
        seq: Int64, at: Date, kind: EventKind, jobId: JobID? = nil, queue: QueueName? = nil, state: String? = nil,
        previousState: String? = nil, result: String? = nil, exitCode: Int32? = nil, signal: Int32? = nil, attempt: Int? = nil,
        ownerUid: UInt32? = nil
    ) {
        self.ownerUid = ownerUid
        self.seq = seq
        self.at = at
        self.kind = kind
        self.jobId = jobId
        self.queue = queue
        self.state = state
        self.previousState = previousState
        self.result = result
        self.exitCode = exitCode
        self.signal = signal
        self.attempt = attempt
    }

    private enum CodingKeys: String, CodingKey {
        case seq, at, kind, jobId, queue, state, previousState, result, exitCode, signal, attempt, ownerUid
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seq = try c.decode(Int64.self, forKey: .seq)
        let text = try c.decode(String.self, forKey: .at)
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: .at, in: c, debugDescription: "not an RFC 3339 time: \(text)")
        }
        at = date
        kind = try c.decode(EventKind.self, forKey: .kind)
        jobId = try c.decodeIfPresent(JobID.self, forKey: .jobId)
        queue = try c.decodeIfPresent(QueueName.self, forKey: .queue)
        state = try c.decodeIfPresent(String.self, forKey: .state)
        previousState = try c.decodeIfPresent(String.self, forKey: .previousState)
        result = try c.decodeIfPresent(String.self, forKey: .result)
        exitCode = try c.decodeIfPresent(Int32.self, forKey: .exitCode)
        signal = try c.decodeIfPresent(Int32.self, forKey: .signal)
        attempt = try c.decodeIfPresent(Int.self, forKey: .attempt)
        ownerUid = try c.decodeIfPresent(UInt32.self, forKey: .ownerUid)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(seq, forKey: .seq)
        try c.encode(Timestamp.format(at), forKey: .at)
        try c.encode(kind, forKey: .kind)
        try c.encode(jobId, forKey: .jobId)
        try c.encode(queue, forKey: .queue)
        try c.encode(state, forKey: .state)
        try c.encode(previousState, forKey: .previousState)
        try c.encode(result, forKey: .result)
        try c.encode(exitCode, forKey: .exitCode)
        try c.encode(signal, forKey: .signal)
        try c.encode(attempt, forKey: .attempt)
        try c.encode(ownerUid, forKey: .ownerUid)
    }
}
