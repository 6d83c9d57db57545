import CPosix
import Foundation
import Glibc
import Synchronization
import TestWaitLimits

/// A real single-node Slurm cluster for the tests of Slurm queues: munged, slurmctld and
/// slurmd in the foreground, with a private `slurm.conf` (passed through `SLURM_CONF`, nothing
/// in /etc/slurm), their own state directories under a temporary directory, their own munge
/// socket and free ports, so that test processes running at once never share one.
///
/// Started once per test process, on first use (``shared()``), and stopped by PID when the
/// process exits. Slurm's packages (`slurm-wlm`, `munge`) must be installed: without them
/// ``shared()`` throws, saying so, and every Slurm test fails rather than passes silently.
final class SlurmCluster: Sendable {
    /// The temporary directory holding the configuration, state and logs.
    let directory: String
    /// The private `slurm.conf`.
    let configurationPath: String
    /// The processes to stop at exit.
    private let pids: [Int32]

    /// The environment Slurm's commands (and orchd, which runs them) need: `SLURM_CONF`.
    var environment: [String: String] { ["SLURM_CONF": configurationPath] }

    /// The binaries the cluster and orchd's Slurm executor use.
    static let binaries = [
        "/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch", "/usr/bin/squeue",
        "/usr/bin/scancel", "/usr/bin/sacct", "/usr/bin/sinfo", "/usr/bin/scontrol", "/usr/bin/setpriv",
    ]

    private static let started: Result<SlurmCluster, TestFailure> = Result { () throws(TestFailure) in try SlurmCluster() }

    /// The cluster of this test process, started on first use.
    /// - Throws: ``TestFailure`` when Slurm is not installed or does not come up, with why.
    static func shared() throws -> SlurmCluster {
        try started.get()
    }

    /// Runs a Slurm command against this cluster.
    func run(_ command: String, _ arguments: [String]) throws -> CommandResult {
        var environment = ProcessInfo.processInfo.environment
        environment["SLURM_CONF"] = configurationPath
        return try TestDaemon.run(command, arguments, environment: environment)
    }

    /// The IDs squeue lists as pending, running, suspended or completing (its default states).
    func liveJobIDs() throws -> Set<String> {
        let result = try run("/usr/bin/squeue", ["-h", "-o", "%i"])
        guard result.status == 0 else { throw TestFailure("squeue failed: \(result)") }
        return Set(result.standardOutput.split(separator: "\n").map(String.init))
    }

    /// The state squeue shows for a Slurm job (`RUNNING`, `SUSPENDED`, ...), or `""` when it
    /// lists none.
    func state(of id: String) throws -> String {
        let result = try run("/usr/bin/squeue", ["-h", "-j", id, "-o", "%T"])
        guard result.status == 0 else { throw TestFailure("squeue failed: \(result)") }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private init() throws(TestFailure) {
        let missing = Self.binaries.filter { access($0, X_OK) != 0 }
        guard missing.isEmpty else {
            throw TestFailure("Slurm is not installed: \(missing.joined(separator: ", ")) missing (apt-get install slurm-wlm munge; .ci/run does)")
        }
        var template = Array("/tmp/orchd-slurm-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw TestFailure("cannot create a directory for the Slurm cluster") }
        directory = String(cString: created)
        configurationPath = directory + "/slurm.conf"
        // munged checks that every directory above its socket is searchable by all.
        chmod(directory, 0o755)
        let mungeDirectory = directory + "/munge"
        for sub in ["munge", "ctld", "spool", "log"] { mkdir(directory + "/" + sub, 0o755) }
        guard let munge = getpwnam("munge") else { throw TestFailure("no 'munge' user: is munge installed?") }
        chown(mungeDirectory, munge.pointee.pw_uid, munge.pointee.pw_gid)
        chmod(mungeDirectory, 0o755)

        var started: [Int32] = []
        do {
            let mungeSocket = mungeDirectory + "/munge.sock"
            // In the foreground, as the munge user: this container's /dev/null is mode 0640,
            // which munged's daemonizing refuses.
            started.append(try Self.spawn("/usr/bin/setpriv", [
                "--reuid=munge", "--regid=munge", "--init-groups", "/usr/sbin/munged", "-F", "--socket=\(mungeSocket)",
                "--pid-file=\(mungeDirectory)/munged.pid", "--seed-file=\(mungeDirectory)/munged.seed",
                "--log-file=\(mungeDirectory)/munged.log", "--num-threads=10",
            ], log: directory + "/log/munged.out"))
            try Self.waitUntil("munged creates its socket \(mungeSocket)", log: directory + "/log/munged.out") {
                access(mungeSocket, F_OK) == 0
            }
            let ports = try Self.freePorts(2)
            let node = try Self.nodeLine(scratch: directory + "/node.out")
            try Self.configuration(
                directory: directory, mungeSocket: mungeSocket, controllerPort: ports[0], nodePort: ports[1], node: node
            ).write(toFile: configurationPath, atomically: true, encoding: .utf8)
            let environment = ["SLURM_CONF": configurationPath]
            started.append(try Self.spawn("/usr/sbin/slurmctld", ["-D", "-i"], log: directory + "/log/slurmctld.out", environment: environment))
            started.append(try Self.spawn("/usr/sbin/slurmd", ["-D"], log: directory + "/log/slurmd.out", environment: environment))
            // Ready when the node has registered and is idle: only then does a job start.
            let configuration = configurationPath
            let scratch = directory + "/sinfo.out"
            try Self.waitUntil("the Slurm node is idle (sinfo)", log: directory + "/log/slurmctld.log") {
                Self.output(of: "/usr/bin/sinfo", ["-h", "-o", "%t"], scratch: scratch, configuration: configuration) == "idle\n"
            }
        } catch let error as TestFailure {
            Self.stop(started, removing: directory)
            throw error
        } catch {
            Self.stop(started, removing: directory)
            throw TestFailure("cannot write \(configurationPath): \(error)")
        }
        pids = started
        Self.running.withLock { $0.append((started, directory)) }
        atexit { SlurmCluster.stopAll() }
    }

    /// The daemons of every cluster this process started, with the directory each cluster keeps
    /// its configuration, state and logs in.
    private static let running = Mutex<[(pids: [Int32], directory: String)]>([])

    /// Stops every daemon this process started, by PID, and removes their directories (at exit).
    static func stopAll() {
        for cluster in running.withLock({ clusters in
            defer { clusters = [] }
            return clusters
        }) {
            stop(cluster.pids, removing: cluster.directory)
        }
    }

    /// SIGTERM to each daemon, by PID; once all are gone (SIGKILL for one still there after
    /// ``stopLimit``), `directory` is removed: nothing writes to it any more.
    private static func stop(_ pids: [Int32], removing directory: String) {
        for pid in pids.reversed() { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(stopLimit)
        for pid in pids.reversed() {
            while !isGone(pid) {
                guard Date() < deadline else {
                    kill(pid, SIGKILL)
                    while !isGone(pid) { usleep(10_000) }
                    break
                }
                usleep(10_000)
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// How long the daemons get to save their state and exit after SIGTERM.
    private static let stopLimit: TimeInterval = 10

    /// Whether the daemon `pid` has exited: reaped here, or already reaped elsewhere and no
    /// longer there.
    private static func isGone(_ pid: Int32) -> Bool {
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { return true }
        return reaped < 0 && errno == ECHILD && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Starts a daemon in the foreground with its output in `log`. posix_spawn rather than
    /// Foundation's Process: with these long-lived children started from a static
    /// initializer, Process was seen to stop noticing the exit of later children.
    private static func spawn(_ path: String, _ arguments: [String], log: String, environment: [String: String] = [:]) throws(TestFailure) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test process: a pipe another test opened meanwhile for a child's
        // output (Foundation's are not close-on-exec) would stay open in munged or slurmctld for
        // the whole run, and that test would wait forever for its end of file.
        cposix_spawn_file_actions_addclosefrom(&actions, 3)
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // A clean signal mask and default dispositions: a mask inherited from a test thread
        // would make a daemon deaf to the SIGTERM that stops it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let code = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard code == 0 else { throw TestFailure("cannot start \(path): \(String(cString: strerror(code)))") }
        return pid
    }

    /// Waits for a condition Slurm gives no notification of (munged's socket, the node
    /// registering with slurmctld): it is checked again every 50 ms, for at most 30 s. Slurm
    /// has no readiness protocol (no sd_notify in the foreground, no ready file), so asking
    /// its commands is the only way to know; the bound keeps a broken setup from hanging.
    private static func waitUntil(_ what: String, log: String, _ condition: () -> Bool) throws(TestFailure) {
        for _ in 0..<600 {
            if condition() { return }
            usleep(50_000)
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw TestFailure("timed out waiting until \(what); \(log):\n\(text.suffix(3000))")
    }

    /// `slurmd -C`'s node line (this machine's CPUs and memory).
    private static func nodeLine(scratch: String) throws(TestFailure) -> String {
        let answer = output(of: "/usr/sbin/slurmd", ["-C"], scratch: scratch, configuration: nil) ?? ""
        guard let line = answer.split(separator: "\n").first(where: { $0.hasPrefix("NodeName=") }) else {
            throw TestFailure("slurmd -C printed no node line: \(answer)")
        }
        return String(line)
    }

    /// Runs a command to its end with its output in `scratch`, and returns that output when it
    /// exited 0. posix_spawn and waitpid rather than Foundation's Process: this runs inside a
    /// static initializer, where waiting on Process's exit notification was seen to hang.
    static func output(of path: String, _ arguments: [String], scratch: String, configuration: String?) -> String? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, scratch, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        cposix_spawn_file_actions_addclosefrom(&actions, 3)
        var environment = ProcessInfo.processInfo.environment
        if let configuration { environment["SLURM_CONF"] = configuration }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, path, &actions, nil, argv, envp) == 0 else { return nil }
        var status: Int32 = 0
        // Killed after a minute (status 9: no answer), as a command waiting on a controller
        // that never answers would otherwise hold the cluster's start for ever.
        waiting(for: pid, atMost: 60) {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        guard status == 0 else { return nil }
        return try? String(contentsOfFile: scratch, encoding: .utf8)
    }

    /// TCP ports nothing listens on now (bound to port 0, then released).
    private static func freePorts(_ count: Int) throws(TestFailure) -> [Int] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = INADDR_ANY
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard fd >= 0, bound else { throw TestFailure("cannot find a free port") }
            sockets.append(fd)
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    /// The private slurm.conf: one node, one partition that shares cores among up to 8 jobs.
    private static func configuration(directory: String, mungeSocket: String, controllerPort: Int, nodePort: Int, node: String) -> String {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count)
        let hostname = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return """
            ClusterName=orchd\(getpid())
            SlurmctldHost=\(hostname)
            SlurmctldPort=\(controllerPort)
            SlurmdPort=\(nodePort)
            AuthType=auth/munge
            AuthInfo=socket=\(mungeSocket)
            CredType=cred/munge
            SlurmUser=root
            SlurmdUser=root
            StateSaveLocation=\(directory)/ctld
            SlurmdSpoolDir=\(directory)/spool
            SlurmctldPidFile=\(directory)/slurmctld.pid
            SlurmdPidFile=\(directory)/slurmd.pid
            SlurmctldLogFile=\(directory)/log/slurmctld.log
            SlurmdLogFile=\(directory)/log/slurmd.log
            ProctrackType=proctrack/linuxproc
            TaskPlugin=task/none
            JobAcctGatherType=jobacct_gather/none
            AccountingStorageType=accounting_storage/none
            JobCompType=jobcomp/filetxt
            JobCompLoc=\(directory)/jobcomp.txt
            SchedulerType=sched/builtin
            SchedulerParameters=batch_sched_delay=0
            SelectType=select/cons_tres
            SelectTypeParameters=CR_Core
            MailProg=/bin/true
            ReturnToService=2
            KillWait=5
            MpiDefault=none
            \(node) State=UNKNOWN
            PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8

            """
    }
}
