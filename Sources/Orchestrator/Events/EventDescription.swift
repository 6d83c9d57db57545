import OrchestratorAPI

/// How an event reads in a log line, and how serious it is.
enum EventDescription {
    /// One line, e.g. `job 7 finished: failed(3)` or `queue builds drained`.
    static func message(_ event: Event) -> String {
        let subject = event.jobId.map { "job \($0)" } ?? event.queue.map { "queue \($0)" } ?? "orchd"
        // Recorded finished as it was submitted (a dependency had already failed).
        if event.kind == .submitted, let result = event.result { return "\(subject) submitted and finished at once: \(result)" }
        switch event.kind {
        case .finished, .cancelled, .retrying:
            var outcome = event.result ?? event.kind.rawValue
            if let code = event.exitCode, event.result == "failed" { outcome += "(\(code))" }
            if let signal = event.signal { outcome += "(\(signal))" }
            let verb = event.kind == .retrying ? "attempt \(event.attempt ?? 0) ended" : "finished"
            return "\(subject) \(verb): \(outcome)\(event.kind == .retrying ? "; will retry" : "")"
        case .started:
            return "\(subject) started (attempt \(event.attempt ?? 1))"
        case .queuePaused: return "\(subject) paused"
        case .queueResumed: return "\(subject) resumed"
        case .queueDrained: return "\(subject) drained"
        case .daemonReady: return "orchd ready"
        case .daemonStopping: return "orchd stopping"
        default: return "\(subject) \(event.kind)"
        }
    }

    /// How serious it is: `error` for a job that could not start, `warning` for a job that did
    /// not succeed, `info` otherwise; the level's raw value is its syslog priority
    /// (sd-daemon(3)), which a journal entry carries.
    static func level(_ event: Event) -> DaemonLog.Level {
        switch event.result {
        case "spawn_failed": .error
        case "failed", "signaled", "timed_out", "interrupted", "dependency_failed": event.kind == .retrying ? .info : .warning
        default: .info
        }
    }
}
