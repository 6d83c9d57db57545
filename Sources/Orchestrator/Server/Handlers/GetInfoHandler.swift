import Dispatch
import Glibc
import OrchestratorAPI

/// `io.orchd.Manager.GetInfo`: version, pid, uptime, paths, job counts, containment and sync.
struct GetInfoHandler: VarlinkMethodHandler {
    static let method = ManagerInterface.getInfo
    let scheduler: Scheduler
    let configuration: DaemonConfiguration
    /// When the daemon started, on the monotonic clock.
    let startTime: ContinuousClock.Instant
    /// The concurrency in force now: a reload (SIGHUP) may have changed it.
    let concurrency: @Sendable () -> Int

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        let uptime = startTime.duration(to: .now)
        Task { [scheduler, configuration, concurrency] in
            let counts = await scheduler.jobCounts
            responder.reply(ManagerInterface.InfoReply(
                version: OrchdVersion.string,
                pid: getpid(),
                uptimeUSec: uptime.microseconds,
                stateDirectory: configuration.stateDirectory,
                socket: configuration.socketPath,
                concurrency: concurrency(),
                jobs: counts,
                containment: scheduler.containment.name,
                cgroup: scheduler.containment.subtree?.path,
                sync: configuration.sync.name, syncIntervalUSec: configuration.sync.intervalUSec))
        }
    }
}
