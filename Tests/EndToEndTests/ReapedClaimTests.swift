import Foundation
import OrchestratorAPI
import Synchronization
import Testing

/// The slots that reaped ends free are claimed in the ends' own transaction; a succeeded
/// job's end may also queue its dependents and feed the queue again. The jobs claimed in the
/// transaction must hold their slots by then, or that feed claims past the queue's limits.
@Suite("Reaped ends, claims and dependents")
struct ReapedClaimTests {
    private func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    @Test("at concurrency 1, an end that frees the slot and queues a dependent starts the job queued first, alone")
    func dependentWaitsForTheSlot() throws {
        let daemon = try TestDaemon(concurrency: 1)
        let records = daemon.directory + "/records"
        let first = try daemon.orchctl(["submit", "--", "sleep", "1"]).line
        // Queued now: claimed in the transaction of the first job's end.
        let queued = try daemon.orchctl([
            "submit", "--shell", "echo queued start >> '\(records)'; sleep 1; echo queued end >> '\(records)'",
        ]).line
        // Waiting on the first: queued by the end's bookkeeping, which feeds the queue again.
        let dependent = try daemon.orchctl([
            "submit", "--after", first,
            "--shell", "echo dependent start >> '\(records)'; sleep 1; echo dependent end >> '\(records)'",
        ]).line
        #expect(try daemon.orchctl(["wait", queued, dependent, "--timeout", "60s"]).status == 0)
        // One at a time, and the job queued first (same priority) first.
        #expect(try lines(records) == ["queued start", "queued end", "dependent start", "dependent end"])
    }

    @Test("an end that frees a slot and queues a dependent keeps the per-user limit")
    func dependentKeepsPerUserLimit() throws {
        let daemon = try TestDaemon(concurrency: 4, arguments: ["--max-running-per-user", "1"])
        let records = daemon.directory + "/records"
        let first = try daemon.orchctl(["submit", "--", "sleep", "1"]).line
        let queued = try daemon.orchctl([
            "submit", "--shell", "echo start >> '\(records)'; sleep 1; echo end >> '\(records)'",
        ]).line
        let dependent = try daemon.orchctl([
            "submit", "--after", first, "--shell", "echo start >> '\(records)'; sleep 1; echo end >> '\(records)'",
        ]).line
        #expect(try daemon.orchctl(["wait", queued, dependent, "--timeout", "60s"]).status == 0)
        #expect(try lines(records) == ["start", "end", "start", "end"], "one job of the user at a time")
    }

    @Test("a job that ended holds its slot until its end, final or a retry's, is written: in sequence and in time, no queue's events show more jobs running than its concurrency")
    func endsComeBeforeTheNextStart() throws {
        let daemon = try TestDaemon(concurrency: 1)
        #expect(try daemon.orchctl(["queue", "set", "default", "--retry-base", "1ms", "--retry-cap", "2ms"]).status == 0)
        let socket = daemon.socketPath
        let succeeds = JobSpec(command: .argv(["true"]), cwd: "/", environment: ["PATH": "/usr/bin:/bin"])
        // Fails twice: its first end is a retry's (`retrying`), which frees the slot too.
        let retried = JobSpec(command: .argv(["false"]), cwd: "/", environment: ["PATH": "/usr/bin:/bin"], maxAttempts: 2)
        // Eight clients submitting at once keep calls queued on orchd's control queue, each
        // claiming the slot in its own transaction when it finds it free, while the jobs end
        // one after another.
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                let client = try VarlinkClient.limited(socketPath: socket)
                for index in 0..<30 {
                    _ = try client.call(JobsInterface.submit, JobsInterface.SubmitParameters(spec: index.isMultiple(of: 2) ? succeeds : retried))
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let drained = try daemon.orchctl(["wait", "--queue", "default", "--drained"])
        #expect(drained.status == 0, "\(drained)\n\(daemon.daemonLog)")
        let events = try daemon.orchctl(["events"]).standardOutput.split(separator: "\n")
            .map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
        #expect(events.filter { $0.kind == .started }.count == 120 + 2 * 120)
        var running: Set<JobID> = []
        var lastEnd: Date?
        for event in events.sorted(by: { $0.seq < $1.seq }) {
            guard let id = event.jobId else { continue }
            switch event.kind {
            case .started:
                running.insert(id)
                #expect(running.count <= 1, "job \(id) started (seq \(event.seq)) while \(running.sorted { $0.rawValue < $1.rawValue }) ran")
                if let lastEnd { #expect(event.at >= lastEnd, "job \(id) started at \(event.at), before the end at \(lastEnd) that freed its slot") }
            case .finished, .retrying:
                running.remove(id)
                lastEnd = event.at
            default: break
            }
        }
    }
}
