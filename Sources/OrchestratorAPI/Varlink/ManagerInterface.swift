/// Parameter and reply types of the `io.orchd.Manager` interface (`io.orchd.Manager.varlink`).
public enum ManagerInterface {
    public static let name = "io.orchd.Manager"

    /// How many jobs are in each state.
    public struct JobCounts: Codable, Sendable, Hashable {
        public var waiting: Int
        public var queued: Int
        public var running: Int
        public var finished: Int
        public init(waiting: Int = 0, queued: Int = 0, running: Int = 0, finished: Int = 0) {
            self.waiting = waiting
            self.queued = queued
            self.running = running
            self.finished = finished
        }
    }

    /// `GetInfo() -> (...)`: the daemon's identity and counters.
    public struct InfoReply: Codable, Sendable {
        public var version: String
        public var pid: Int32
        /// Time since the daemon started, in microseconds.
        public var uptimeUSec: Int64
        public var stateDirectory: String
        public var socket: String
        /// Default concurrency of a queue.
        public var concurrency: Int
        public var jobs: JobCounts
        public init(version: String, pid: Int32, uptimeUSec: Int64, stateDirectory: String, socket: String, concurrency: Int, jobs: JobCounts) {
            self.version = version
            self.pid = pid
            self.uptimeUSec = uptimeUSec
            self.stateDirectory = stateDirectory
            self.socket = socket
            self.concurrency = concurrency
            self.jobs = jobs
        }
    }
}
