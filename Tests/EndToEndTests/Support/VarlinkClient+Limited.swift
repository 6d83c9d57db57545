import Glibc
import OrchestratorAPI

extension VarlinkClient {
    /// How long a test's Varlink client waits for orchd to take a call or answer it.
    static let testTimeLimit = 300

    /// Connects as `init(socketPath:)` does, with reads and writes that give up after
    /// ``testTimeLimit`` seconds (`SO_RCVTIMEO`, `SO_SNDTIMEO`): a reply that never comes fails
    /// the call (`connectionLost` with `EAGAIN`) instead of blocking the test for ever.
    static func limited(socketPath: String) throws(VarlinkClientError) -> VarlinkClient {
        let client = try VarlinkClient(socketPath: socketPath)
        var limit = timeval(tv_sec: testTimeLimit, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(client.socketDescriptor, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        return client
    }
}
