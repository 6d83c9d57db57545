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
    /// - Returns: whether there was anything to kill.
    @discardableResult
    public func killEverything() -> Bool {
        var killedAny = false
        for group in jobGroups() + hookGroups() where group.isPopulated {
            if group.kill() != 0 { group.signal(SIGKILL) }
            killedAny = true
        }
        // Once those killed have exited, a look finds what they started meanwhile.
        let giveUp = ContinuousClock.now + .milliseconds(500)
        while let pids = Self.liveDescendants(), !pids.isEmpty, ContinuousClock.now < giveUp {
            for pid in pids { kill(pid, SIGKILL) }
            killedAny = true
            guard ProcessExitWait.untilExited(pids, deadline: giveUp) else { break }
        }
        return killedAny
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
        var signalled: Set<Int32> = []
        let graceEnds = ContinuousClock.now + grace
        let giveUp = graceEnds + .seconds(5)
        // Until a look finds none, each look's processes signalled and waited for: one may
        // start another as it goes. One found within the grace gets SIGTERM, after it SIGKILL.
        var pids = first
        while !pids.isEmpty, ContinuousClock.now < giveUp {
            let pastGrace = ContinuousClock.now >= graceEnds
            for pid in pids where signalled.insert(pid).inserted || pastGrace {
                kill(pid, pastGrace ? SIGKILL : SIGTERM)
            }
            let waitEnds = pastGrace ? giveUp : graceEnds
            // One not watched (orchd out of descriptors) while time is left: give up rather
            // than look again at once, without end.
            if !ProcessExitWait.untilExited(pids, deadline: waitEnds) && ContinuousClock.now < waitEnds { break }
            pids = Self.liveDescendants() ?? []
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
