import Dispatch
import Foundation
import Glibc
import Synchronization

/// Runs one Slurm client command (`sbatch`, `squeue`, `sacct`, `scancel`, `scontrol`) without
/// blocking, and hands back its status and output.
///
/// It is spawned like a job (``ProcessLauncher``: clean signal mask, only fds 0-2) and reaped
/// through its pidfd (``ChildReaper``); its output goes to two scratch files that are read and
/// removed when it exits. Not `Foundation.Process`: orchd's orphan reaper only leaves alone
/// the children it knows (``SpawnedProcesses``), and Process waits for its own.
struct SlurmCommand: Sendable {
    /// How a command ended.
    struct Outcome: Sendable {
        /// Its exit status; `nil` when it could not be started (see ``launchError``).
        var status: TerminationStatus?
        /// Its standard output.
        var output: String
        /// Its standard error, trimmed.
        var error: String
        /// Why it could not be started (e.g. "command not found: sbatch").
        var launchError: String?

        /// Whether it exited with status 0.
        var succeeded: Bool { status == .exited(0) }

        /// What went wrong, for messages: Slurm's own words when it said any.
        var failure: String {
            if let launchError { return launchError }
            if !error.isEmpty { return error }
            switch status {
            case .exited(let code)?: return "exited with status \(code)"
            case .signaled(let signal)?: return "killed by signal \(signal)"
            case nil: return "did not run"
            }
        }
    }

    private let launcher = ProcessLauncher()
    private let reaper: ChildReaper
    /// Where the output files go (created when missing).
    private let scratchDirectory: String
    /// The commands' environment: orchd's own, so that `SLURM_CONF` and `PATH` reach them,
    /// with `SLURM_TIME_FORMAT=%s`: the times sacct prints, in seconds since the epoch rather
    /// than in the local time zone (sacct(1), ENVIRONMENT VARIABLES).
    private let environment: [String: String]
    private static let counter = Atomic<Int64>(0)

    /// Creates a runner.
    /// - Parameters:
    ///   - reaper: reaps the commands.
    ///   - scratchDirectory: a directory of orchd's for their output.
    init(reaper: ChildReaper, scratchDirectory: String) {
        self.reaper = reaper
        self.scratchDirectory = scratchDirectory
        self.environment = ProcessInfo.processInfo.environment.merging(["SLURM_TIME_FORMAT": "%s"]) { _, new in new }
    }

    /// Starts `arguments` and calls `completion` on `queue` once it has exited.
    /// - Parameters:
    ///   - arguments: the command and its arguments, looked up in orchd's `PATH`.
    ///   - queue: where `completion` runs.
    ///   - completion: its outcome, exactly once.
    /// - Returns: the command's process ID, which also names its process group, or `nil`
    ///   when it could not be started. It is reaped on `queue`, just before `completion`, so
    ///   until then a signal sent from `queue` reaches this command and no other process.
    @discardableResult
    func run(_ arguments: [String], on queue: DispatchQueue, completion: @escaping @Sendable (Outcome) -> Void) -> Int32? {
        mkdir(scratchDirectory, 0o700)
        let number = Self.counter.add(1, ordering: .relaxed).newValue
        let base = "\(scratchDirectory)/command-\(getpid())-\(number)"
        let request = LaunchRequest(
            arguments: arguments, workingDirectory: scratchDirectory, environment: environment,
            standardOutputPath: base + ".out", standardErrorPath: base + ".err")
        let process: LaunchedProcess
        do {
            process = try launcher.launch(request)
        } catch {
            unlink(base + ".out")
            unlink(base + ".err")
            queue.async { completion(Outcome(status: nil, output: "", error: "", launchError: error.message)) }
            return nil
        }
        reaper.watch(process, on: queue) { status in
            let output = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
            let error = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
            unlink(base + ".out")
            unlink(base + ".err")
            completion(Outcome(
                status: status, output: output, error: error.trimmingCharacters(in: .whitespacesAndNewlines), launchError: nil))
        }
        return process.pid
    }
}
