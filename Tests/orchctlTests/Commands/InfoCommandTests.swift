import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("info")
struct InfoCommandTests {
    @Test("info's job counts group their digits as status's last line does")
    func groupedCounts() {
        let counts = JobCounts(waiting: 1_000, queued: 12_345, running: 2, finished: 1_234_567)
        let info = ManagerInterface.InfoReply(
            version: "0.1.0", pid: 42, uptimeUSec: 1_500_000, stateDirectory: "/var/lib/orchd", socket: "/run/orchd/orchd.sock",
            concurrency: 2, jobs: counts, containment: "process-group", cgroup: nil)
        let jobsLine = InfoCommand.render(info).split(separator: "\n").first { $0.hasPrefix("jobs:") }
        #expect(jobsLine == "jobs:            2 running, 12,345 queued, 1,000 waiting, 1,234,567 finished")
        #expect(JobTable.summary(counts) == "2 running, 12,345 queued, 1,000 waiting, 1,234,567 finished")
    }
}
