/// Parameter and reply types of the `io.orchd.Manager` interface (`io.orchd.Manager.varlink`).
public enum ManagerInterface {
    /// The name.
    public static let name = "io.orchd.Manager"

    /// `Ping() -> ()`.
    public static let ping = VarlinkMethod<VarlinkNoParameters, VarlinkNoParameters>(
        "io.orchd.Manager.Ping", writeParameters: { $0.writeJSON(to: &$1) }, readReply: VarlinkNoParameters.read)
    /// `GetInfo() -> (version, pid, ...)`.
    public static let getInfo = VarlinkMethod<VarlinkNoParameters, InfoReply>(
        "io.orchd.Manager.GetInfo",
        writeParameters: { $0.writeJSON(to: &$1) })
    /// `Reload() -> (concurrency, error)`.
    public static let reload = VarlinkMethod<VarlinkNoParameters, ReloadReply>(
        "io.orchd.Manager.Reload",
        writeParameters: { $0.writeJSON(to: &$1) })
    /// `Shutdown() -> ()`: stops orchd as SIGTERM does; the reply goes out before the stop begins.
    public static let shutdown = VarlinkMethod<VarlinkNoParameters, VarlinkNoParameters>(
        "io.orchd.Manager.Shutdown", writeParameters: { $0.writeJSON(to: &$1) }, readReply: VarlinkNoParameters.read)
    /// `GetUserNames(uids) -> (names)`: login names, as orchd's password database has them.
    public static let getUserNames = VarlinkMethod<UserNamesParameters, UserNamesReply>(
        "io.orchd.Manager.GetUserNames", writeParameters: { $0.writeJSON(to: &$1) })
    /// Every method of the interface.
    public static let methods = [ping.erased, getInfo.erased, reload.erased, shutdown.erased, getUserNames.erased]

    /// The qualified names of the errors about a connection rather than a method: any call may
    /// meet them.
    public enum Errors {
        /// A message over the size cap; the connection is closed.
        public static let messageTooLarge = "io.orchd.Manager.MessageTooLarge"
        /// A message that is not a Varlink call; the connection is closed.
        public static let malformedMessage = "io.orchd.Manager.MalformedMessage"
        /// A reply over the size cap, sent in its place.
        public static let replyTooLarge = "io.orchd.Manager.ReplyTooLarge"
        /// A reply that could not be encoded, sent in its place.
        public static let internalError = "io.orchd.Manager.InternalError"
        /// The connecting user holds the most connections one user may; this one is closed.
        public static let tooManyConnections = "io.orchd.Manager.TooManyConnections"
        /// Every one of them.
        public static let all = [messageTooLarge, malformedMessage, replyTooLarge, internalError, tooManyConnections]
    }

    public typealias JobCounts = OrchestratorAPI.JobCounts

    /// `GetInfo() -> (...)`: the daemon's identity and counters.
    public struct InfoReply: Codable, Sendable {
        /// orchd's version.
        public var version: String
        /// The daemon's process ID.
        public var pid: Int32
        /// Time since the daemon started, in microseconds.
        public var uptimeUSec: Int64
        /// The daemon's state directory.
        public var stateDirectory: String
        /// The control socket's path.
        public var socket: String
        /// Default concurrency of a queue.
        public var concurrency: Int
        /// The jobs.
        public var jobs: JobCounts
        /// How job processes are kept hold of: `cgroup` or `process-group`.
        public var containment: String
        /// With cgroup containment, the cgroup holding the job groups.
        public var cgroup: String?
        /// When a reply that reports a change goes out: `always` (once on disk) or `interval`
        /// (once committed; on disk within ``syncIntervalUSec``).
        public var sync: String
        /// With `interval`, the longest a committed change waits for its fsync, in microseconds.
        public var syncIntervalUSec: Int64?
        /// Creates a value with every field given.
        public init(
            version: String, pid: Int32, uptimeUSec: Int64, stateDirectory: String, socket: String, concurrency: Int, jobs: JobCounts,
            containment: String, cgroup: String?, sync: String = "always", syncIntervalUSec: Int64? = nil
        ) {
            self.sync = sync
            self.syncIntervalUSec = syncIntervalUSec
            self.containment = containment
            self.cgroup = cgroup
            self.version = version
            self.pid = pid
            self.uptimeUSec = uptimeUSec
            self.stateDirectory = stateDirectory
            self.socket = socket
            self.concurrency = concurrency
            self.jobs = jobs
        }
    }

    /// An ``InfoReply`` read for the job counts alone (``VarlinkMethod/decodingReply(as:reading:)``):
    /// what `status` shows under its table.
    public struct JobCountsReply: Codable, Sendable {
        /// How many jobs are in each state.
        public var jobs: JobCounts

        /// Reads `{"jobs": {...}, ...}` as the `Decodable` conformance does (other members
        /// skipped), or gives up (`nil`) on anything else.
        @Sendable public static func read(_ reader: inout JSONByteReader) -> JobCountsReply? {
            reader.member("jobs", JobCounts.read).map(JobCountsReply.init(jobs:))
        }
    }

    /// `Reload() -> (concurrency, error)`: the configuration file was read again (SIGHUP).
    public struct ReloadReply: Codable, Sendable {
        /// The default concurrency now in force.
        public var concurrency: Int
        /// Why the file could not be applied; `nil` when it was. The old settings stay then.
        public var error: String?
        /// Creates a value with every field given.
        public init(concurrency: Int, error: String? = nil) {
            self.concurrency = concurrency
            self.error = error
        }
    }

    /// `GetUserNames(uids)`: the users whose login names are wanted.
    public struct UserNamesParameters: Codable, Sendable {
        /// The most uids one call may name.
        public static let maximumCount = 1000
        /// The user IDs; repeats are answered once.
        public var uids: [UInt32]
        /// Creates a value with every field given.
        public init(uids: [UInt32]) { self.uids = uids }
    }

    /// `GetUserNames(uids) -> (names)`: each known uid's login name.
    public struct UserNamesReply: Codable, Sendable {
        /// Login names by uid in decimal; a uid the password database does not know is absent.
        public var names: [String: String]
        /// Creates a value with every field given.
        public init(names: [String: String]) { self.names = names }
    }
}
