import Foundation
import Glibc

@testable import Orchestrator

extension LaunchedProcess {
    /// Waits (up to 10 s) until the process runs `program`: until its execve is done, its
    /// environment is its parent's, and a look for a job's processes passes it over.
    func waitUntilExecuted(_ program: String) {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            if command.hasPrefix(program + "\u{0}") { return }
            usleep(1000)
        }
    }
}
