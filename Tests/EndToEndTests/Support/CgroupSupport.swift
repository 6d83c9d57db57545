import Foundation
import Glibc
import Orchestrator

/// Whether this machine lets orchd contain jobs in cgroups, for the cgroup end-to-end tests.
///
/// Where it does not, those tests are skipped with ``skipReason``, except under `CI=true`,
/// where they run and fail saying why (a CI machine must exercise the cgroup path).
enum CgroupSupport {
    /// `nil` when a writable cgroup2 subtree can be set up, else why not.
    static let unavailableReason: String? = {
        let probe = NSTemporaryDirectory() + "/orchd-cgroup-probe-\(getpid())"
        do {
            let containment = try Containment.setUp(mode: .cgroup, stateDirectory: probe)
            containment.removeSubtree()
            return nil
        } catch {
            return "\(error)"
        }
    }()

    /// Whether the cgroup tests run: cgroups work, or CI requires them anyway.
    static var shouldRun: Bool {
        unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Shown for a skipped cgroup test.
    static var skipReason: String {
        "no writable cgroup2 subtree (\(unavailableReason ?? "?")); cgroup containment tests skipped (they fail under CI=true)"
    }

    /// Fails the running test when cgroups are unavailable (only reached under CI=true).
    /// - Returns: whether the test can go on.
    static func requireAvailable() throws {
        if let reason = unavailableReason {
            throw TestFailure("CI=true requires the cgroup containment tests, but this machine has no writable cgroup2 subtree: \(reason)")
        }
    }

    /// The live processes whose environment carries `ORCHD_STATE_DIR=<stateDirectory>`: every
    /// job process of one test daemon, escaped ones included. Zombies have no readable
    /// environment and are not listed.
    static func liveJobProcesses(stateDirectory: String) -> [Int32] {
        let needle = Array("ORCHD_STATE_DIR=\(stateDirectory)".utf8)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        // Newest first: a process that exits after the listing, having started another, is
        // then read before it goes more often than not.
        return entries.compactMap { Int32($0) }.sorted(by: >).filter { pid in
            guard pid != getpid(), let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return environ.split(separator: 0).contains { $0.elementsEqual(needle) }
        }
    }

    /// Kills every job process of a test daemon and removes its cgroup subtree, so a failed
    /// test leaves nothing behind.
    static func cleanUp(stateDirectory: String, cgroup: String?) {
        for pid in liveJobProcesses(stateDirectory: stateDirectory) { kill(pid, SIGKILL) }
        guard let cgroup else { return }
        let subtree = Cgroup(path: cgroup)
        for name in subtree.children() where name.hasPrefix("job-") || name.hasPrefix("hook-") {
            let group = subtree.child(name)
            group.kill()
            group.waitUntilEmpty(timeout: .seconds(10))
            group.remove()
        }
        // A delegated or still-running daemon's subtree is not ours to remove.
        if !subtree.isPopulated && subtree.name.hasPrefix("orchd-") { subtree.remove() }
    }
}

/// Starts orchd in a new mount namespace where the cgroup2 mount is read-only, as on a
/// machine that gives orchd no writable cgroup (`unshare` from util-linux, as root).
enum ReadOnlyCgroup {
    /// The launcher prefix for ``TestDaemon``: `unshare --mount` then a shell that remounts
    /// the cgroup2 mount read-only and execs orchd.
    static var launcher: [String] {
        let mount = Containment.cgroup2Mount() ?? "/sys/fs/cgroup"
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount -o remount,bind,ro '\(mount)' && exec \"$0\" \"$@\""]
    }

    /// `nil` when a read-only cgroup mount can be set up in a new mount namespace here.
    static let unavailableReason: String? = {
        guard Containment.cgroup2Mount() != nil else { return "no cgroup2 mount" }
        guard let result = try? TestDaemon.run(launcher[0], Array(launcher.dropFirst()) + ["/bin/true"]) else {
            return "cannot run unshare"
        }
        return result.status == 0 ? nil : "unshare --mount failed: \(result.standardError)"
    }()
}
