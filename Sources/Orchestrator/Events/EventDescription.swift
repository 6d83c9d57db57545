import OrchestratorAPI

/// How an event reads in a log line, and how serious it is.
enum EventDescription {
    /// One line, e.g. `job 7 finished: failed(3)` or `queue builds drained`.
    static func message(_ event: Event) -> String {
        let subject = event.jobId.map { "job \($0)" } ?? event.queue.map { "queue \($0)" } ?? "orchd"
        switch event.kind {
        case .finished, .cancelled, .retrying:
            var outcome = event.result ?? event.kind.rawValue
            if let code = event.exitCode, event.result == "failed" { outcome += "(\(code))" }
            if let signal = event.signal { outcome += "(\(signal))" }
            let verb = event.kind == .retrying ? "attempt \(event.attempt ?? 0) ended" : "finished"
            return "\(subject) \(verb): \(outcome)\(event.kind == .retrying ? "; will retry" : "")"
        case .started:
            return "\(subject) started (attempt \(event.attempt ?? 1))"
        case .submitted where event.result != nil:
            // Recorded finished as it was submitted (a dependency had already failed).
            return "\(subject) submitted and finished at once: \(event.result ?? "")"
        case .queuePaused: return "\(subject) paused"
        case .queueResumed: return "\(subject) resumed"
        case .queueDrained: return "\(subject) drained"
        case .daemonReady: return "orchd ready"
        case .daemonStopping: return "orchd stopping"
        default: return "\(subject) \(event.kind)"
        }
    }

    /// The syslog priority (sd-daemon(3)): 3 for a job that could not start, 4 for a job that
    /// did not succeed, 6 otherwise.
    static func priority(_ event: Event) -> Int {
        switch event.result {
        case "spawn_failed": 3
        case "failed", "signaled", "timed_out", "interrupted", "dependency_failed": event.kind == .retrying ? 6 : 4
        default: 6
        }
    }
}
