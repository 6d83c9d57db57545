import OrchestratorAPI
import Testing

@Suite("Default paths")
struct OrchdPathsTests {
    @Test("the state directory follows flag > ORCHD_STATE_DIR > STATE_DIRECTORY > per-user default")
    func stateDirectoryOrder() {
        let all = ["ORCHD_STATE_DIR": "/a", "STATE_DIRECTORY": "/b:/c", "HOME": "/home/u", "XDG_STATE_HOME": "/x"]
        #expect(OrchdPaths.stateDirectory(explicit: "/flag", environment: all, uid: 1000) == "/flag")
        #expect(OrchdPaths.stateDirectory(explicit: nil, environment: all, uid: 1000) == "/a")
        #expect(OrchdPaths.stateDirectory(explicit: nil, environment: ["STATE_DIRECTORY": "/b:/c"], uid: 1000) == "/b")
        #expect(OrchdPaths.stateDirectory(explicit: nil, environment: [:], uid: 0) == "/var/lib/orchd")
        #expect(OrchdPaths.stateDirectory(explicit: nil, environment: ["XDG_STATE_HOME": "/x"], uid: 1000) == "/x/orchd")
        #expect(OrchdPaths.stateDirectory(explicit: nil, environment: ["HOME": "/home/u"], uid: 1000) == "/home/u/.local/state/orchd")
    }

    @Test("the socket follows flag > ORCHD_SOCKET > RUNTIME_DIRECTORY > per-user default")
    func socketOrder() {
        #expect(OrchdPaths.socket(explicit: nil, environment: ["ORCHD_SOCKET": "/s"], uid: 1000) == "/s")
        #expect(OrchdPaths.socket(explicit: nil, environment: ["RUNTIME_DIRECTORY": "/run/orchd"], uid: 0) == "/run/orchd/orchd.sock")
        #expect(OrchdPaths.socket(explicit: nil, environment: [:], uid: 0) == "/run/orchd/orchd.sock")
        #expect(OrchdPaths.socket(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000) == "/run/user/1000/orchd/orchd.sock")
        #expect(OrchdPaths.socket(explicit: nil, environment: [:], uid: 1000) == "/tmp/orchd-1000/orchd.sock")
    }

    @Test("a user with no orchd of their own reaches the system service's socket; an own orchd, --socket or $ORCHD_SOCKET wins")
    func clientFallsBackToTheSystemService() {
        let system: Set<String> = [OrchdPaths.systemSocket]
        #expect(OrchdPaths.clientSocket(explicit: nil, environment: [:], uid: 1000, exists: system.contains) == "/run/orchd/orchd.sock")
        let own: Set<String> = [OrchdPaths.systemSocket, "/tmp/orchd-1000/orchd.sock"]
        #expect(OrchdPaths.clientSocket(explicit: nil, environment: [:], uid: 1000, exists: own.contains) == "/tmp/orchd-1000/orchd.sock")
        #expect(OrchdPaths.clientSocket(explicit: "/x.sock", environment: [:], uid: 1000, exists: system.contains) == "/x.sock")
        #expect(OrchdPaths.clientSocket(explicit: nil, environment: ["ORCHD_SOCKET": "/y.sock"], uid: 1000, exists: system.contains) == "/y.sock")
        #expect(OrchdPaths.clientSocket(explicit: nil, environment: [:], uid: 1000, exists: { _ in false }) == "/tmp/orchd-1000/orchd.sock",
                "neither there: the user's own path, which the error message names")
    }
}
