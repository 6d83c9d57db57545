import Foundation
import Glibc

// MARK: - Processes that would outlive the daemon

extension Containment {
    /// Kills at once (SIGKILL), reading nothing of the database, every process of every job
    /// and hook this daemon runs: for a daemon that must exit now, its database beyond use,
    /// so that nothing it started goes on unsupervised, as systemd's `KillMode=control-group`
    /// would end it. With cgroups, `cgroup.kill` of each job and hook group; in both modes,
    /// each of the daemon's descendants (it is their child subreaper, so a job's processes
    /// stay in its tree), looked for again until a look finds none, since a job may be
    /// starting meanwhile. A job in Slurm is not the daemon's descendant and goes on, as it
    /// does through any restart.
    /// - Returns: how many cgroups and processes it killed.
    @discardableResult
    public func killEverything() -> Int {
        var killed = 0
        for group in jobGroups() + hookGroups() where group.isPopulated {
            if group.kill() != 0 { group.signal(SIGKILL) }
            killed += 1
        }
        let giveUp = ContinuousClock.now + .milliseconds(500)
        while let pids = Self.liveDescendants(), !pids.isEmpty, ContinuousClock.now < giveUp {
            for pid in pids { kill(pid, SIGKILL) }
            killed += pids.count
            usleep(10_000)
        }
        return killed
    }

    /// Tears down the daemon's descendants left at the end of a clean stop, once every job
    /// and hook has had its own teardown: processes no teardown found, such as one that left
    /// its job's process group and cleared or rewrote its environment (a daemon that retitles
    /// itself overwrites the `ORCHD_JOB_ID` that process-group containment looks for). Each
    /// gets SIGTERM, then SIGKILL once `grace` has passed, as a job's teardown does.
    /// - Parameters:
    ///   - grace: how long they may take to exit after SIGTERM.
    ///   - found: called first when there are any, with the longest the teardown may take
    ///     (the grace and 5 s more), to tell systemd the stop goes on that long.
    /// - Returns: the processes it signalled, none when the daemon is no child subreaper
    ///   (its descendants cannot be told then).
    @discardableResult
    public func tearDownLeftoverDescendants(grace: Duration, found: (_ longest: Duration) -> Void = { _ in }) -> [Int32] {
        guard let first = Self.liveDescendants(), !first.isEmpty else { return [] }
        found(grace + .seconds(5))
        DaemonLog.warning(
            "\(first.count) process\(first.count == 1 ? "" : "es") outlived their job's teardown (pid \(first.map(String.init).joined(separator: ", "))): SIGTERM, then SIGKILL after \(grace)")
        var signalled = Set(first)
        for pid in first { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + grace
        // Until none is left: a process may start another as it goes.
        let giveUp = deadline + .seconds(5)
        while let pids = Self.liveDescendants(), !pids.isEmpty, ContinuousClock.now < giveUp {
            let pastGrace = ContinuousClock.now >= deadline
            for pid in pids where pastGrace || signalled.insert(pid).inserted {
                kill(pid, pastGrace ? SIGKILL : SIGTERM)
            }
            usleep(10_000)
        }
        return signalled.sorted()
    }

    /// The daemon's descendants that have not exited (zombies, waiting for the orphan reaper,
    /// left out), or `nil` when the daemon is no child subreaper.
    private static func liveDescendants() -> [Int32]? {
        ProcessTree.daemonDescendants()?.filter { pid in
            guard let state = ProcStat.fields(pid: pid)?.first else { return false }
            return state != "Z" && state != "X"
        }
    }
}
