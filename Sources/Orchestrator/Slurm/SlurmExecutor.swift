import CPosix
import Dispatch
import Foundation
import Glibc
import OrchestratorAPI
import Synchronization

/// Runs a queue's attempts as Slurm batch jobs (`queue set Q --executor slurm`).
///
/// - **Submit**: the scheduler records the attempt as submitting (``prepare(_:in:)``), then
///   `sbatch --parsable` gets a generated script (``SlurmBatchScript``) with the job's name
///   `orchd-<id>`, its log files, `--time` from its timeout, and a comment naming the state
///   directory and attempt; the Slurm job ID it prints is recorded.
/// - **Observe**: one `squeue --json` per ``pollInterval``, only while attempts are in Slurm
///   (a repeating timer, cancelled when none is left); a job in a final state, or gone from
///   squeue, is settled from its state, its exit-status file, then `sacct` (``SlurmJobState``).
/// - **Cancel**: `scancel`; the end is reported once squeue shows the job ended.
/// - **Restarts**: a shutdown detaches (Slurm jobs go on); ``reattach(_:launch:onStarted:onEnd:)``
///   picks them up by Slurm job ID, or finds one whose ID was never recorded by its comment.
/// - **Errors**: an `sbatch` Slurm refuses ends the attempt `spawn_failed` with Slurm's
///   message; one that cannot reach the controller gives the claim back and makes the executor
///   unavailable for a backoff (2 s, doubling to a minute).
///
/// All mutable state is confined to ``queue``, a serial queue of its own, so Slurm's commands
/// never hold up the control queue; callbacks go to the control queue.
final class SlurmExecutor: JobExecutor, @unchecked Sendable { // safe: mutable state is touched only on `queue` (below) or is in Mutexes/Atomics; availabilityChanged is set once before use
    /// How often squeue is asked while attempts are in Slurm.
    static let pollInterval: Duration = .seconds(1)
    /// The first wait after Slurm could not be reached; doubled up to ``unreachableBackoffCap``.
    static let unreachableBackoffBase: Duration = .seconds(2)
    static let unreachableBackoffCap: Duration = .seconds(60)
    /// The wait before a failed scancel is run again.
    static let scancelRetry: Duration = .seconds(2)

    /// The queue whose jobs this executor runs.
    let name: QueueName
    /// Serial queue for every piece of mutable state below that is not in a Mutex.
    let queue: DispatchQueue
    private let callbackQueue: DispatchQueue
    private let command: SlurmCommand
    private let stateDirectory: String
    private let settings: Mutex<QueueExecutorSettings>
    /// Whether Slurm answered the last call, and what it said when it did not.
    private let health = Mutex<(answered: Bool?, lastError: String?)>((nil, nil))
    private let available = Atomic<Bool>(true)
    /// Set once by the scheduler before the first launch, read on `queue` afterwards.
    var availabilityChanged: (@Sendable () -> Void)?

    // On `queue`:
    private var attempts: [JobID: SlurmAttempt] = [:]
    private var pollTimer: (any DispatchSourceTimer)?
    private var pollInFlight = false
    private var backoff: Duration = SlurmExecutor.unreachableBackoffBase
    private var backoffTimer: (any DispatchSourceTimer)?
    /// The last squeue failure logged and when, while squeue fails.
    private var lastSqueueFailure: (message: String, logged: ContinuousClock.Instant)?

    /// Creates the executor of one queue.
    /// - Parameters:
    ///   - name: the queue.
    ///   - settings: its partition and sbatch options.
    ///   - stateDirectory: orchd's state directory (scripts and command output go to `slurm/` in it).
    ///   - reaper: reaps the Slurm commands.
    ///   - callbackQueue: the control queue.
    init(name: QueueName, settings: QueueExecutorSettings, stateDirectory: String, reaper: ChildReaper, callbackQueue: DispatchQueue) {
        self.name = name
        self.settings = Mutex(settings)
        self.stateDirectory = stateDirectory
        self.callbackQueue = callbackQueue
        self.queue = DispatchQueue(label: "orchd.slurm.\(name)")
        self.command = SlurmCommand(reaper: reaper, scratchDirectory: stateDirectory + "/slurm")
    }

    var isAvailable: Bool { available.load(ordering: .relaxed) }

    /// The queue's Slurm settings from now on (running attempts keep theirs).
    func update(_ newSettings: QueueExecutorSettings) {
        settings.withLock { $0 = newSettings }
    }

    /// The settings and health `orchctl queues` shows.
    var info: QueueInfo.SlurmSettings {
        let current = settings.withLock { $0 }
        let (answered, lastError) = health.withLock { $0 }
        return QueueInfo.SlurmSettings(
            partition: current.slurmPartition, options: current.slurmOptions, answered: answered, lastError: lastError)
    }

    // MARK: - Launching

    /// Records the attempt as submitting, before sbatch can run: recovery then knows that a
    /// job may be in Slurm whose ID was never recorded.
    func prepare(_ job: Job, in store: JobStore) throws {
        try store.recordSlurmSubmitting(job.id)
    }

    func launch(
        _ launch: ExecutorLaunch,
        onStarted: @escaping @Sendable (Result<ExecutorStart, LaunchError>) -> Void,
        onEnd: @escaping @Sendable (ExecutorEnd) -> Void
    ) -> any ExecutorAttempt {
        let attempt = SlurmAttempt(launch: launch, executor: self, onStarted: onStarted, onEnd: onEnd)
        queue.async { self.submit(attempt) }
        return attempt
    }

    /// Takes over an attempt a previous orchd submitted: by its recorded Slurm job ID, or
    /// (`""`: orchd died while submitting) by looking for its comment in squeue; when Slurm has
    /// no such job, sbatch never ran and the attempt ends `interrupted` (retried when it may be).
    /// - Parameters:
    ///   - slurmJobID: the stored ID, `""` when it was never recorded.
    ///   - launch: the attempt's job and log files.
    ///   - stopBegunBeforeRestart: the previous orchd had begun a stop (a cancel or timeout
    ///     stored with the job), which the caller makes again: its exit status then counts
    ///     as the stop's, whenever it was written.
    ///   - onStarted: gets the Slurm job ID once known.
    ///   - onEnd: its end.
    func reattach(
        slurmJobID: String, launch: ExecutorLaunch, stopBegunBeforeRestart: Bool,
        onStarted: @escaping @Sendable (Result<ExecutorStart, LaunchError>) -> Void,
        onEnd: @escaping @Sendable (ExecutorEnd) -> Void
    ) -> any ExecutorAttempt {
        let attempt = SlurmAttempt(launch: launch, executor: self, onStarted: onStarted, onEnd: onEnd)
        queue.async {
            attempt.stopBegunBeforeRestart = stopBegunBeforeRestart
            self.attempts[attempt.jobID] = attempt
            if slurmJobID.isEmpty {
                attempt.phase = .lookingUp
            } else {
                attempt.phase = .inSlurm(slurmJobID)
                self.callbackQueue.async { onStarted(.success(.slurmJob(slurmJobID))) }
            }
            self.schedulePolling()
        }
        return attempt
    }

    /// The comment an attempt's Slurm job carries, by which a restarted orchd finds it when its
    /// ID was never recorded: it names the job, its attempt and this state directory.
    static func comment(job: JobID, attempt: Int, stateDirectory: String) -> String {
        "orchd job=\(job) attempt=\(attempt) state=\(stateDirectory)"
    }

    /// Where an attempt's exit status is written: beside its standard output
    /// (`<id>.out` → `<id>.exit`).
    static func exitStatusPath(standardOutputPath path: String) -> String {
        (path.hasSuffix(".out") ? String(path.dropLast(4)) : path) + ".exit"
    }

    /// An empty file, mode 0444, in the directory of an attempt's logs (`<log dir>/<uid>/
    /// empty-stdin`), made once: the batch script's standard input. Slurm's default,
    /// `/dev/null`, is opened as the job's user, and a system whose `/dev/null` others may not
    /// read (some containers) would fail every job of a user with "Could not open stdin file".
    /// The owner can replace the file, which changes only their own jobs' input.
    /// - Returns: the path.
    /// - Throws: ``LaunchError`` when it cannot be made.
    static func prepareEmptyInput(besides logPath: String) throws(LaunchError) -> String {
        let directory = logPath.lastIndex(of: "/").map { String(logPath[..<$0]) } ?? "."
        let path = directory + "/empty-stdin"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o444)
        if fd >= 0 {
            // Whatever the umask: the job's user must be able to read it.
            fchmod(fd, 0o444)
            close(fd)
        } else if errno != EEXIST {
            throw LaunchError(code: errno, context: "cannot create \(path)")
        }
        return path
    }

    /// A path as an sbatch file name pattern: `%` is Slurm's replacement character.
    static func filenamePattern(_ path: String) -> String {
        path.replacingOccurrences(of: "%", with: "%%")
    }

    /// Slurm's `--time` for a timeout: whole minutes, rounded up. orchd's own timer ends the
    /// job at its timeout; Slurm's limit is the backstop while orchd is down.
    static func timeLimit(microseconds: Int64) -> String {
        let minutes = max(1, (microseconds + 59_999_999) / 60_000_000)
        return String(minutes)
    }

    /// The sbatch command line for an attempt (the script path last).
    func sbatchArguments(for attempt: SlurmAttempt, script: String) -> [String] {
        let current = settings.withLock { $0 }
        let launch = attempt.launch
        var arguments = ["sbatch", "--parsable"]
        if let partition = current.slurmPartition { arguments.append("--partition=\(partition)") }
        arguments += current.slurmOptions
        arguments += [
            "--job-name=orchd-\(launch.job.id)",
            "--comment=\(Self.comment(job: launch.job.id, attempt: launch.job.attempt, stateDirectory: stateDirectory))",
            "--output=\(Self.filenamePattern(launch.request.standardOutputPath))",
            "--error=\(Self.filenamePattern(launch.request.standardErrorPath))",
            "--chdir=\(launch.request.workingDirectory)",
            // The script sets the job's environment itself (env -i): nothing of orchd's, and
            // no login environment (which --export=NONE would load).
            "--export=NIL",
            // Slurm requeues a batch job by default (JobRequeue=1) after a node failure or a
            // preemption and runs it again under the same ID: orchd would see one end for two
            // runs. The attempt ends interrupted instead, and --retries decides.
            "--no-requeue",
        ]
        if let input = attempt.inputPath { arguments.append("--input=\(Self.filenamePattern(input))") }
        if let owner = attempt.owner {
            // Root's sbatch submits the job as its owner (sbatch(1) --uid, --gid): Slurm runs
            // it as that user, with the user's primary group.
            arguments += ["--uid=\(owner.uid)", "--gid=\(owner.gid)"]
        }
        if let timeout = launch.job.spec.timeoutUSec { arguments.append("--time=\(Self.timeLimit(microseconds: timeout))") }
        arguments.append(script)
        return arguments
    }

    /// Writes the script and the empty log files, and runs sbatch (on `queue`).
    private func submit(_ attempt: SlurmAttempt) {
        if let reason = attempt.stopReason {
            // Stopped before it was submitted: nothing is in Slurm.
            report(attempt, .finished(reason.jobResult))
            return
        }
        let launch = attempt.launch
        let request = launch.request
        mkdir(stateDirectory + "/slurm", 0o700)
        let scriptPath = batchScriptPath(job: launch.job.id, attempt: launch.job.attempt)
        let script = SlurmBatchScript(
            arguments: request.arguments, workingDirectory: request.workingDirectory, environment: request.environment,
            exitStatusPath: attempt.exitStatusPath, title: "orchd job \(launch.job.id), attempt \(launch.job.attempt)")
        unlink(attempt.exitStatusPath)
        do {
            try Data(script.text.utf8).write(to: URL(fileURLWithPath: scriptPath))
            // Empty logs from the start, as for a local job: `logs -f` can follow at once. A
            // job of another user gets its files (and its log directory) as a local one does,
            // so that Slurm, running the job as that user, can write them.
            var owner: UserAccount?
            if let uid = request.user {
                guard let account = UserAccount.lookup(uid: uid) else {
                    throw LaunchError(code: ESRCH, message: "no user with uid \(uid) in the password database")
                }
                owner = account
            }
            for path in Set([request.standardOutputPath, request.standardErrorPath]) {
                close(try ProcessLauncher().openLog(path, owner: owner))
            }
            attempt.owner = owner
            attempt.inputPath = try Self.prepareEmptyInput(besides: request.standardOutputPath)
        } catch {
            let message = (error as? LaunchError)?.message ?? "cannot write the batch script \(scriptPath): \(error)"
            fail(attempt, message)
            return
        }
        attempts[launch.job.id] = attempt
        attempt.sbatchProcess = command.run(sbatchArguments(for: attempt, script: scriptPath), on: queue) { [self] outcome in
            attempt.sbatchProcess = nil
            unlink(scriptPath)
            submitted(attempt, outcome)
        }
    }

    /// Where an attempt's batch script is written for sbatch, which gets it as its last
    /// argument: a restarted orchd tells an sbatch of the previous one still running by it.
    func batchScriptPath(job: JobID, attempt: Int) -> String {
        "\(stateDirectory)/slurm/job-\(job)-\(attempt).sh"
    }

    /// The running processes that have one of `scriptPaths` among their arguments, by script:
    /// an sbatch a previous orchd started for the attempt, which may yet get the job to Slurm.
    /// Read from every process's `/proc/PID/cmdline` (proc_pid_cmdline(5)), in one walk; only
    /// while attempts are looked up.
    static func submittingScripts(among scriptPaths: Set<String>) -> [String: [Int32]] {
        guard !scriptPaths.isEmpty else { return [:] }
        let wanted = Set(scriptPaths.map { Array($0.utf8) })
        var found: [String: [Int32]] = [:]
        for name in ProcStat.entryNames(of: "/proc") {
            guard let pid = Int32(name), let commandLine = ProcStat.readFile("/proc/\(name)/cmdline") else { continue }
            for argument in commandLine.split(separator: 0) where wanted.contains(Array(argument)) {
                found[String(decoding: argument, as: UTF8.self), default: []].append(pid)
            }
        }
        return found
    }

    /// Sends `signal` to each of `pids` that still has `script` among its arguments: the sbatch
    /// (and any wrapper of it) a previous orchd started for an attempt that is now stopped.
    /// Left running it could hang for as long as the controller does not answer, and the stop
    /// would wait with it. The pid is opened as a pidfd before its arguments are read again, and
    /// the signal goes through that pidfd (pidfd_send_signal(2)), so a process that took a pid
    /// freed since the walk is never signalled.
    /// - Returns: the pids signalled.
    static func stopSubmissions(_ pids: [Int32], of script: String, signal: Int32) -> [Int32] {
        pids.filter { pid in
            let pidfd = cposix_pidfd_open(pid)
            guard pidfd >= 0 else { return false }
            defer { close(pidfd) }
            guard let commandLine = ProcStat.readFile("/proc/\(pid)/cmdline"),
                commandLine.split(separator: 0).contains(where: { $0.elementsEqual(script.utf8) })
            else { return false }
            return cposix_pidfd_send_signal(pidfd, signal) == 0
        }
    }

    /// The job ID `sbatch --parsable` printed: the first field (`ID` or `ID;cluster`) of its
    /// last line with anything on it, since a site's sbatch (or a wrapper) may print notices
    /// before it; `nil` when that is no number.
    static func submittedJobID(in output: String) -> String? {
        let line = output.split(whereSeparator: \.isNewline).last { !$0.allSatisfy(\.isWhitespace) }
        let id = line.map { String($0.split(separator: ";", omittingEmptySubsequences: false).first ?? "").trimmingCharacters(in: .whitespaces) } ?? ""
        return !id.isEmpty && id.allSatisfy(\.isASCII) && id.allSatisfy(\.isNumber) ? id : nil
    }

    private func submitted(_ attempt: SlurmAttempt, _ outcome: SlurmCommand.Outcome) {
        guard outcome.succeeded, let idText = Self.submittedJobID(in: outcome.output) else {
            if let reason = attempt.stopReason {
                if case .signaled? = outcome.status {
                    // The stop killed sbatch, which may have got the job to Slurm first: it is
                    // looked for by its comment, as after a restart, and cancelled if found.
                    attempt.phase = .lookingUp
                    schedulePolling()
                } else {
                    report(attempt, .finished(reason.jobResult))
                }
                return
            }
            if outcome.launchError == nil && (outcome.succeeded || Self.isUnreachable(outcome.error)) {
                // sbatch may have got the job to Slurm all the same: a controller that took it
                // and answered too late makes sbatch say "Socket timed out", and submitting again
                // ran the job twice. It is looked for by its comment first, as after a restart.
                if outcome.succeeded {
                    let printed = outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
                    attempt.unconfirmed = .noJobID("sbatch exited 0 but printed no job ID" + (printed.isEmpty ? "" : ": '\(String(printed.prefix(200)).visible)'"))
                } else {
                    noteAnswer(false, outcome.failure)
                    becomeUnavailable()
                    attempt.unconfirmed = .unreachable(outcome.failure)
                }
                attempt.phase = .lookingUp
                schedulePolling()
                return
            }
            attempts[attempt.jobID] = nil
            if outcome.launchError == nil { noteAnswer(true, nil) }
            fail(attempt, "sbatch: \(outcome.failure)")
            return
        }
        noteAnswer(true, nil)
        becameAvailable()
        attempt.phase = .inSlurm(idText)
        callbackQueue.async { [onStarted = attempt.onStarted] in onStarted(.success(.slurmJob(idText))) }
        if attempt.stopReason != nil { cancelInSlurm(attempt) }
        schedulePolling()
    }

    /// Ends an attempt that could not be submitted as `spawn_failed`.
    private func fail(_ attempt: SlurmAttempt, _ message: String) {
        attempts[attempt.jobID] = nil
        callbackQueue.async { [onStarted = attempt.onStarted] in onStarted(.failure(LaunchError(code: EIO, message: message))) }
        report(attempt, .finished(.spawnFailed(reason: message)))
    }

    /// Whether sbatch's (or squeue's) words mean the controller could not be reached, rather
    /// than a refusal: then the job is submitted again later, not failed.
    static func isUnreachable(_ message: String) -> Bool {
        let markers = [
            "Unable to contact slurm controller", "Socket timed out", "Connection refused", "Zero Bytes were transmitted",
            "Unable to establish", "Communication connection failure", "Slurm backup controller in standby mode",
            "Slurm temporarily unable", "Munge encode failed", "authentication error",
        ]
        return markers.contains { message.localizedCaseInsensitiveContains($0) }
    }

    // MARK: - Availability

    private func noteAnswer(_ answered: Bool, _ error: String?) {
        health.withLock { state in
            state.answered = answered
            if let error { state.lastError = error }
        }
    }

    private func becomeUnavailable() {
        guard available.exchange(false, ordering: .relaxed) else { return }
        DaemonLog.warning("queue \(name): Slurm cannot be reached; submitting again in \(TimeSpan.format(backoff))")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.backoffTimer = nil
            self.backoff = min(self.backoff * 2, Self.unreachableBackoffCap)
            self.available.store(true, ordering: .relaxed)
            if let changed = self.availabilityChanged { self.callbackQueue.async { changed() } }
        }
        timer.schedule(deadline: .now() + backoff.dispatchInterval)
        backoffTimer = timer
        timer.activate()
    }

    private func becameAvailable() {
        backoff = Self.unreachableBackoffBase
    }

    // MARK: - Stopping

    /// Stops an attempt (on `queue`): a shutdown detaches; a cancel or timeout runs scancel,
    /// and the end follows once squeue shows the job ended.
    fileprivate func stop(_ attempt: SlurmAttempt, reason: StopReason, signal: Int32?) {
        guard !attempt.reported else { return }
        // A shutdown detaches even an attempt being cancelled: its scancel has been sent or
        // is sent by the next orchd, which follows the job to its end. Waiting for an end that
        // Slurm may not report (squeue failing) held orchd's stop for ever.
        if reason == .shutdown {
            attempt.reported = true
            attempts[attempt.jobID] = nil
            callbackQueue.async { [onEnd = attempt.onEnd] in onEnd(.detached) }
            stopPollingIfIdle()
            return
        }
        guard attempt.stopReason == nil else {
            // Another cancel with a signal (`cancel --signal KILL`): sent now, as to a local job.
            if let signal, case .inSlurm = attempt.phase {
                attempt.stopSignal = signal
                cancelInSlurm(attempt)
            }
            return
        }
        attempt.stopReason = reason
        attempt.stopSignal = signal
        // Only a status written before now is the command's own end (settle(_:state:...)). A
        // stop made again after a restart began before it, at a time not stored: a status
        // there now may have been written after that (a stopped job recorded succeeded), so
        // the stop decides.
        attempt.endedBeforeStop = !attempt.stopBegunBeforeRestart && readExitStatus(attempt) != nil
        switch attempt.phase {
        case .inSlurm: cancelInSlurm(attempt)
        case .submitting:
            // sbatch may wait long for a controller that does not answer, and the stop must
            // not wait with it: it is killed, and submitted(_:_:) then looks for the job
            // (or cancels it, when sbatch had already printed its ID).
            if let group = attempt.sbatchProcess { ProcessGroup(id: group).signal(SIGTERM) }
        case .lookingUp:
            break  // cancelled once found
        }
    }

    /// Cancels an attempt's Slurm job: `scancel ID` (Slurm sends SIGTERM, then SIGKILL after
    /// its KillWait). With a stop signal, `scancel --full --signal=N ID` first sends only that
    /// signal to every process of the job, and the plain scancel follows after the attempt's
    /// teardown grace, unless the job ended meanwhile.
    private func cancelInSlurm(_ attempt: SlurmAttempt) {
        guard case .inSlurm(let id) = attempt.phase else { return }
        // A job that is not running has no process to signal: scancel --signal then retries
        // for about 100 s ("Job can not be altered now") before it fails. The plain scancel
        // goes at once, as for a job that is waiting.
        if attempt.stopSignal != nil && (attempt.slurmState == nil || attempt.slurmState == "PENDING") {
            attempt.stopSignal = nil
        }
        if let signal = attempt.stopSignal {
            attempt.stopSignal = nil
            command.run(["scancel", "--full", "--signal=\(signal)", id], on: queue) { [self] outcome in
                if !outcome.succeeded {
                    DaemonLog.error("queue \(name): scancel --signal=\(signal) \(id) for job \(attempt.jobID) failed: \(outcome.failure)")
                }
                queue.asyncAfter(deadline: .now() + attempt.launch.teardownGrace.dispatchInterval) { [self] in
                    if !attempt.reported { cancelInSlurm(attempt) }
                }
            }
            return
        }
        command.run(["scancel", id], on: queue) { [self] outcome in
            if !outcome.succeeded {
                noteAnswer(outcome.launchError == nil && !Self.isUnreachable(outcome.error), outcome.failure)
                DaemonLog.error("queue \(name): scancel \(id) for job \(attempt.jobID) failed: \(outcome.failure); trying again in \(TimeSpan.format(Self.scancelRetry))")
                // Until it is done: a controller that did not answer must not leave the job
                // running while the cancel waits for its end.
                queue.asyncAfter(deadline: .now() + Self.scancelRetry.dispatchInterval) { [self] in
                    if !attempt.reported { cancelInSlurm(attempt) }
                }
            }
        }
    }

    /// `scontrol suspend|resume ID` (on `queue`).
    fileprivate func setSuspended(_ attempt: SlurmAttempt, _ suspended: Bool, completion: @escaping @Sendable (String?) -> Void) {
        guard case .inSlurm(let id) = attempt.phase else {
            completion("job \(attempt.jobID) is not in Slurm yet")
            return
        }
        command.run(["scontrol", suspended ? "suspend" : "resume", id], on: queue) { outcome in
            completion(outcome.succeeded ? nil : "scontrol: \(outcome.failure)")
        }
    }

    // MARK: - Observing

    /// Arms the poll timer when attempts are in Slurm and it is not armed (on `queue`).
    private func schedulePolling() {
        guard pollTimer == nil, !attempts.isEmpty else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.schedule(deadline: .now() + Self.pollInterval.dispatchInterval, repeating: Self.pollInterval.dispatchInterval)
        pollTimer = timer
        timer.activate()
    }

    private func stopPollingIfIdle() {
        guard attempts.isEmpty else { return }
        pollTimer?.cancel()
        pollTimer = nil
    }

    /// One `squeue --json` for every attempt of this queue in Slurm.
    private func poll() {
        let watched = attempts.values.filter { $0.phase != .submitting }
        guard !pollInFlight, !watched.isEmpty else { return }
        pollInFlight = true
        // Looked for before squeue is asked: an sbatch that ends after this look has got its
        // job to the controller before squeue asks it, and one that ends during squeue's call
        // was seen here, so the lookup waits for the next poll.
        let lookups = watched.filter { $0.phase == .lookingUp }
        let submitting = Self.submittingScripts(among: Set(lookups.map { batchScriptPath(job: $0.jobID, attempt: $0.launch.job.attempt) }))
        // A stopped attempt's sbatch is stopped here, whether or not squeue answers: the stop
        // then waits only for Slurm to say whether the job got there (and cancels it if so).
        for attempt in lookups where attempt.stopReason != nil {
            let script = batchScriptPath(job: attempt.jobID, attempt: attempt.launch.job.attempt)
            guard let pids = submitting[script] else { continue }
            let signalled = Self.stopSubmissions(pids, of: script, signal: attempt.signalledOrphanedSbatch ? SIGKILL : SIGTERM)
            if !signalled.isEmpty && !attempt.signalledOrphanedSbatch {
                attempt.signalledOrphanedSbatch = true
                DaemonLog.info("job \(attempt.jobID): stopping the sbatch the previous daemon started for it (pid \(signalled.map(String.init).joined(separator: ", ")))")
            }
        }
        command.run(["squeue", "--json"], on: queue) { [self] outcome in
            pollInFlight = false
            guard outcome.succeeded, let jobs = Self.parseSqueue(outcome.output) else {
                let failure = outcome.succeeded ? Self.squeueErrors(outcome.output) ?? "unreadable output" : outcome.failure
                noteAnswer(false, failure)
                noteSqueueFailure(failure)
                // Every attempt waits for squeue: its exit-status file is in a directory of the
                // job's owner, who could write it while the job runs on, and a retry would then
                // run beside it. It is read only once Slurm shows the job ended or gone.
                return
            }
            noteAnswer(true, nil)
            noteSqueueAnswered()
            for attempt in watched where !attempt.reported {
                switch attempt.phase {
                case .inSlurm(let id):
                    // By its ID, and only while it is still this attempt's job: a controller
                    // that lost its state hands the same IDs to other jobs.
                    if let entry = jobs.first(where: { $0.id == id }), isThisAttempt(entry, attempt) {
                        let state = SlurmJobState(entry.state)
                        attempt.slurmState = state.name
                        if state.isFinal { settle(attempt, state: state, waitStatus: entry.exitCode, endedAt: entry.endTime) }
                    } else {
                        settleFromAccounting(attempt, id: id)
                    }
                case .lookingUp:
                    if let entry = Self.submittedEntry(
                        in: jobs, job: attempt.jobID, attempt: attempt.launch.job.attempt, stateDirectory: stateDirectory,
                        userID: attempt.launch.request.user ?? geteuid()) {
                        // Looked up after a restart, a killed sbatch, or an sbatch answer that
                        // left it open (``SlurmAttempt/unconfirmed``).
                        DaemonLog.warning("job \(attempt.jobID) is in Slurm as \(entry.id) although orchd had no job ID from sbatch; following it")
                        attempt.phase = .inSlurm(entry.id)
                        callbackQueue.async { [onStarted = attempt.onStarted] in onStarted(.success(.slurmJob(entry.id))) }
                        // Cancelled or timed out while it was being looked for.
                        if attempt.stopReason != nil { cancelInSlurm(attempt) }
                        let state = SlurmJobState(entry.state)
                        if state.isFinal { settle(attempt, state: state, waitStatus: entry.exitCode, endedAt: entry.endTime) }
                    } else if let status = readExitStatus(attempt) {
                        // Submitted, run and gone from squeue before this lookup.
                        settle(attempt, status: status)
                    } else if submitting[batchScriptPath(job: attempt.jobID, attempt: attempt.launch.job.attempt)] != nil {
                        // A previous orchd's sbatch still runs: it may yet submit the job (one
                        // of a stopped attempt was signalled above, and is waited for too).
                        attempt.absentPolls = 0
                        if !attempt.waitedForSbatch {
                            attempt.waitedForSbatch = true
                            DaemonLog.warning("job \(attempt.jobID): an sbatch the previous daemon started for it still runs; waiting for it before deciding whether Slurm has the job")
                        }
                    } else {
                        // Not in two answers in a row: an sbatch that ended (killed by a stop,
                        // timed out, or a previous orchd's) may have sent its request already,
                        // which a slow controller takes after answering the first squeue.
                        attempt.absentPolls += 1
                        guard attempt.absentPolls >= 2 else { continue }
                        if let unconfirmed = attempt.unconfirmed, attempt.stopReason == nil {
                            switch unconfirmed {
                            case .unreachable(let reason): report(attempt, .released(reason: reason))
                            case .noJobID(let reason): fail(attempt, reason)
                            }
                        } else {
                            // sbatch never got it to Slurm: nothing runs, nothing is in Slurm.
                            DaemonLog.warning("job \(attempt.jobID) was being submitted to Slurm when it was stopped, and Slurm has no such job")
                            report(attempt, .finished(attempt.stopReason?.jobResult ?? .interrupted))
                        }
                    }
                case .submitting:
                    break
                }
            }
            stopPollingIfIdle()
        }
    }

    /// The Slurm job a previous orchd submitted for an attempt without recording its ID: the
    /// latest with the attempt's name and comment that runs as the job's user. Any user of the
    /// cluster can give their own job that name and comment, so the user is what tells orchd's
    /// submission from a forged one (whose end would be recorded as the job's).
    /// - Parameters:
    ///   - jobs: squeue's jobs.
    ///   - job: the orchd job.
    ///   - attempt: its attempt number.
    ///   - stateDirectory: this orchd's state directory (part of the comment).
    ///   - userID: the uid the job was submitted as (its owner's, or orchd's own); an entry
    ///     without `user_id` (a Slurm that does not say) is not told apart by it.
    /// - Returns: the entry, or `nil` when Slurm has no such job.
    static func submittedEntry(in jobs: [QueueEntry], job: JobID, attempt: Int, stateDirectory: String, userID: UInt32) -> QueueEntry? {
        let comment = comment(job: job, attempt: attempt, stateDirectory: stateDirectory)
        return jobs.filter { $0.comment == comment && $0.name == "orchd-\(job)" && ($0.userID ?? userID) == userID }.max { $0.number < $1.number }
    }

    /// Whether squeue's entry for an attempt's recorded Slurm ID is still that attempt's job:
    /// its name, its comment (when squeue gives one) and its user. After a controller lost
    /// its state the ID may name another user's job, whose end must not be recorded as this
    /// one's, nor its job cancelled.
    private func isThisAttempt(_ entry: QueueEntry, _ attempt: SlurmAttempt) -> Bool {
        let userID = attempt.launch.request.user ?? geteuid()
        let comment = Self.comment(job: attempt.jobID, attempt: attempt.launch.job.attempt, stateDirectory: stateDirectory)
        let same = entry.name == "orchd-\(attempt.jobID)" && (entry.comment.isEmpty || entry.comment == comment) && (entry.userID ?? userID) == userID
        if !same && !attempt.notedForeignID {
            attempt.notedForeignID = true
            DaemonLog.warning("job \(attempt.jobID): Slurm job \(entry.id) is now another job ('\(entry.name)'): the controller lost the job it recorded; settling it from its exit status, else as interrupted")
        }
        return same
    }

    /// A job squeue no longer lists (older than `MinJobAge`): its exit-status file, else sacct.
    private func settleFromAccounting(_ attempt: SlurmAttempt, id: String) {
        // A status over 128 with no stop of orchd's may be the signal of a stop from outside
        // (someone's scancel): Slurm's record tells.
        if let status = readExitStatus(attempt), attempt.stopReason != nil || !status.status.mayBeSignal {
            settle(attempt, status: status)
            return
        }
        guard !attempt.askingAccounting else { return }
        attempt.askingAccounting = true
        // Every user's (`-a`): jobs of other users are submitted with --uid. `End` in seconds
        // since the epoch: SlurmCommand sets `SLURM_TIME_FORMAT=%s`.
        let fields = ["-a", "-j", id, "-X", "-n", "-P", "-o", "State,ExitCode,End,JobName"]
        // Only a record with the attempt's job name: after a controller lost its state, the
        // same ID may name other jobs too.
        let jobName = "orchd-\(attempt.jobID)"
        // The accounting database when there is one, else the job completion log (`-c`).
        command.run(["sacct"] + fields, on: queue) { [self] outcome in
            let answer = Self.parseSacct(outcome.output, jobName: jobName)
            if outcome.succeeded, let answer {
                attempt.askingAccounting = false
                settle(attempt, state: answer.state, waitStatus: answer.waitStatus, endedAt: answer.end)
                return
            }
            command.run(["sacct", "-c"] + fields, on: queue) { [self] completion in
                attempt.askingAccounting = false
                if completion.succeeded, let answer = Self.parseSacct(completion.output, jobName: jobName), answer.state.isFinal {
                    settle(attempt, state: answer.state, waitStatus: answer.waitStatus, endedAt: answer.end)
                } else if let status = readExitStatus(attempt) {
                    // A status over 128 that Slurm's record was to tell from a stop's signal:
                    // with no record and no stop of orchd's, the command's own exit is likelier.
                    settle(attempt, status: status)
                } else {
                    DaemonLog.error("queue \(name): Slurm job \(id) of job \(attempt.jobID) is gone from squeue with no exit status and no accounting record; recording it interrupted")
                    report(attempt, .finished(.interrupted))
                }
            }
        }
    }

    /// Settles an attempt from its exit-status file alone: its batch script ran to the end.
    private func settle(_ attempt: SlurmAttempt, status: (status: SlurmBatchScript.Status, written: Date)) {
        let state = SlurmJobState({ if case .exited(0) = status.status { "COMPLETED" } else { "FAILED" } }())
        settle(attempt, state: state, waitStatus: nil, endedAt: nil, status: status)
    }

    /// Logs a failed squeue: the first of a run of failures, then only when Slurm's words
    /// change or a minute has passed, since squeue is asked every second while jobs are in
    /// Slurm (an squeue missing from `PATH` wrote 600 lines in 10 minutes).
    private func noteSqueueFailure(_ failure: String) {
        let now = ContinuousClock.now
        if let last = lastSqueueFailure, last.message == failure, now - last.logged < .seconds(60) { return }
        DaemonLog.warning("queue \(name): squeue failed: \(failure)\(lastSqueueFailure == nil ? "" : " (still; said once a minute)")")
        lastSqueueFailure = (failure, now)
    }

    /// Logs that squeue answers again after failures.
    private func noteSqueueAnswered() {
        guard lastSqueueFailure != nil else { return }
        lastSqueueFailure = nil
        DaemonLog.info("queue \(name): squeue answers again")
    }

    /// Reports a final state's result (the stop reason's when orchd stopped it) and when the
    /// job ended: when its batch script wrote the exit-status file, else when Slurm says
    /// (`endedAt`), so that an end that came while orchd was down keeps its own time.
    private func settle(
        _ attempt: SlurmAttempt, state: SlurmJobState, waitStatus: Int32?, endedAt: Date?,
        status: (status: SlurmBatchScript.Status, written: Date)? = nil
    ) {
        guard !attempt.reported else { return }
        let written = status ?? readExitStatus(attempt)
        // A command that ran to its end before a cancel or timeout of orchd's began keeps its
        // own result, as a local job's main process does; a status written after the stop
        // began is the stop's. Slurm signals the job's processes one by one, children first:
        // the command can end (0 from `sleep 600 & wait` whose child died first, 1 from its
        // handler, 143 from the SIGTERM itself) and have its status written before the script
        // gets its own signal. Without a stop of orchd's, a status over 128 in a job Slurm
        // ended from outside may be that stop's signal: Slurm's state decides then.
        let ownEnd: Bool
        if attempt.stopReason != nil {
            ownEnd = written != nil && attempt.endedBeforeStop
        } else {
            ownEnd = written.map { !($0.status.mayBeSignal && state.isEndedFromOutside) } ?? false
        }
        let exit = ownEnd ? written : nil
        let observed = state.result(exitStatus: exit?.status, waitStatus: waitStatus) ?? .interrupted
        if state.name == "OUT_OF_MEMORY" {
            DaemonLog.warning("job \(attempt.jobID): Slurm ended it for using more memory than it was given (OUT_OF_MEMORY)")
        }
        unlink(attempt.exitStatusPath)
        // The time the status was written is when the command ended, stopped or not.
        report(attempt, .finished(ownEnd ? observed : attempt.stopReason?.jobResult ?? observed, at: written?.written ?? endedAt))
    }

    /// The attempt's exit-status file and when it was written (its modification time), read
    /// only when it is a plain file: the directory is the job owner's, so a link planted there
    /// must not make orchd read another file.
    private func readExitStatus(_ attempt: SlurmAttempt) -> (status: SlurmBatchScript.Status, written: Date)? {
        let fd = open(attempt.exitStatusPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
              let data = try? handle.read(upToCount: 4096), let text = String(data: data, encoding: .utf8),
              let status = SlurmBatchScript.parseStatus(text)
        else { return nil }
        let written = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        return (status, written)
    }

    /// Reports an attempt's end once (on `queue`).
    private func report(_ attempt: SlurmAttempt, _ end: ExecutorEnd) {
        guard !attempt.reported else { return }
        attempt.reported = true
        attempts[attempt.jobID] = nil
        callbackQueue.async { [onEnd = attempt.onEnd] in onEnd(end) }
        stopPollingIfIdle()
    }

    // MARK: - Parsing Slurm's answers

    /// One job of `squeue --json`.
    struct QueueEntry: Hashable, Sendable {
        /// `job_id`.
        var number: Int64
        var id: String { String(number) }
        /// `name`.
        var name: String
        /// `job_state`.
        var state: String
        /// `exit_code`: a wait(2) status.
        var exitCode: Int32?
        /// `comment`.
        var comment: String
        /// `user_id`: whom the job runs as; `nil` when squeue did not say.
        var userID: UInt32? = nil
        /// `end_time`, for a job that ended; `nil` when squeue gives none (0).
        var endTime: Date? = nil
    }

    /// The jobs of `squeue --json` output (Slurm 22.05's `jobs` array), or `nil` when it is
    /// not that, or when it reports errors: squeue that cannot reach the controller exits 0
    /// with `"errors": [...]` and no jobs, which must not read as every job gone.
    static func parseSqueue(_ text: String) -> [QueueEntry]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let jobs = object["jobs"] as? [[String: Any]], (object["errors"] as? [Any] ?? []).isEmpty
        else { return nil }
        return jobs.compactMap { job -> QueueEntry? in
            guard let number = (job["job_id"] as? NSNumber)?.int64Value else { return nil }
            // Newer Slurm wraps numbers and states ({"number": 3, "set": true}, ["RUNNING"]).
            let state = (job["job_state"] as? String) ?? (job["job_state"] as? [String])?.first ?? ""
            let exit = (job["exit_code"] as? NSNumber)?.int32Value
                ?? (((job["exit_code"] as? [String: Any])?["return_code"] as? NSNumber)?.int32Value).map { $0 << 8 }
            let end = (job["end_time"] as? NSNumber)?.int64Value ?? ((job["end_time"] as? [String: Any])?["number"] as? NSNumber)?.int64Value
            return QueueEntry(
                number: number, name: job["name"] as? String ?? "", state: state, exitCode: exit,
                comment: job["comment"] as? String ?? "", userID: (job["user_id"] as? NSNumber)?.uint32Value,
                endTime: end.flatMap { $0 > 0 ? Date(timeIntervalSince1970: Double($0)) : nil })
        }
    }

    /// The errors `squeue --json` output reports (each one's `description`, else its `error`),
    /// joined; `nil` when it reports none or is not JSON.
    static func squeueErrors(_ text: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let errors = object["errors"] as? [Any], !errors.isEmpty
        else { return nil }
        let said = errors.map { error -> String in
            let fields = error as? [String: Any] ?? [:]
            let description = fields["description"] as? String ?? ""
            return description.isEmpty ? (fields["error"] as? String ?? "an error") : description
        }
        return "squeue reported: " + said.joined(separator: "; ")
    }

    /// `sacct -n -P -o State,ExitCode,End,JobName` output (`End` in seconds since the epoch):
    /// the first line's state (with `jobName`, the first line of that name; a line without
    /// the field counts as of that name), its exit code (`3:0` is status 3, signal 0) as a
    /// wait status, and its end (`nil` when sacct gives none: `Unknown`, or a job still
    /// running); `nil` when there is no such line.
    static func parseSacct(_ text: String, jobName: String? = nil) -> (state: SlurmJobState, waitStatus: Int32?, end: Date?)? {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: "|", omittingEmptySubsequences: false) }
        guard let fields = lines.first(where: { fields in
            fields.count >= 2 && (jobName == nil || fields.count < 4 || fields[3] == jobName![...])
        }) else { return nil }
        let parts = fields[1].split(separator: ":")
        var wait: Int32?
        if parts.count == 2, let code = Int32(parts[0]), let signal = Int32(parts[1]) { wait = (code << 8) | (signal & 0x7f) }
        let end = fields.count >= 3 ? Int64(fields[2]).flatMap { $0 > 0 ? Date(timeIntervalSince1970: Double($0)) : nil } : nil
        return (SlurmJobState(String(fields[0])), wait, end)
    }
}

/// One attempt a ``SlurmExecutor`` runs. Its mutable fields are touched only on the
/// executor's queue.
final class SlurmAttempt: ExecutorAttempt, @unchecked Sendable { // safe: mutable fields are confined to the executor's serial queue
    /// Where the attempt is.
    enum Phase: Hashable {
        /// sbatch has not answered yet.
        case submitting
        /// Recovery looks for a job a previous orchd submitted without recording its ID.
        case lookingUp
        /// In Slurm, by its Slurm job ID.
        case inSlurm(String)
    }

    let launch: ExecutorLaunch
    var jobID: JobID { launch.job.id }
    let exitStatusPath: String
    let onStarted: @Sendable (Result<ExecutorStart, LaunchError>) -> Void
    let onEnd: @Sendable (ExecutorEnd) -> Void
    private weak var executor: SlurmExecutor?
    var phase: Phase = .submitting
    var stopReason: StopReason?
    /// The exit-status file was there when the stop began: the command had ended on its own.
    var endedBeforeStop = false
    /// The previous daemon began a stop of this attempt, stored with the job (re-attached).
    var stopBegunBeforeRestart = false
    /// The first signal of a stop (`cancel --signal`), until it is sent.
    var stopSignal: Int32?
    /// The user the job runs as when not orchd's own (on the executor's queue).
    var owner: UserAccount?
    /// The batch script's standard input (``SlurmExecutor/prepareEmptyInput(besides:)``).
    var inputPath: String?
    var reported = false
    var askingAccounting = false
    /// The process group of the attempt's sbatch while it runs, so a stop can kill it.
    var sbatchProcess: Int32?
    /// The lookup has said that a previous orchd's sbatch still runs.
    var waitedForSbatch = false
    /// A stop has sent SIGTERM to a previous orchd's sbatch of the attempt; one still there
    /// at the next poll gets SIGKILL.
    var signalledOrphanedSbatch = false
    /// The journal has said that its recorded Slurm ID now names another job.
    var notedForeignID = false
    /// Why sbatch's answer left open whether Slurm has the job (it failed as if the
    /// controller could not be reached, or printed no job ID), while it is looked up; what
    /// happens when Slurm has none.
    var unconfirmed: UnconfirmedSubmission?
    /// Answers of squeue in a row, while the attempt is looked up, that had no job of it and
    /// no sbatch of it running.
    var absentPolls = 0
    /// The job's state as squeue last showed it (`PENDING`, `RUNNING`, ...); `nil` before
    /// the first poll that found it.
    var slurmState: String?

    /// An sbatch whose answer leaves open whether Slurm has the job.
    enum UnconfirmedSubmission {
        /// It failed as if the controller could not be reached ("Socket timed out"), which it
        /// also says when the controller took the job but answered late: when Slurm has none,
        /// the claim is given back and the job submitted again later.
        case unreachable(String)
        /// It exited 0 without a job ID on its last line (a site's wrapper printing more, an
        /// option such as --version): when Slurm has none, the attempt fails, saying what sbatch
        /// printed.
        case noJobID(String)
    }

    init(
        launch: ExecutorLaunch, executor: SlurmExecutor, onStarted: @escaping @Sendable (Result<ExecutorStart, LaunchError>) -> Void,
        onEnd: @escaping @Sendable (ExecutorEnd) -> Void
    ) {
        self.launch = launch
        self.executor = executor
        self.exitStatusPath = SlurmExecutor.exitStatusPath(standardOutputPath: launch.request.standardOutputPath)
        self.onStarted = onStarted
        self.onEnd = onEnd
    }

    var outlivesDaemon: Bool { true }

    func stop(reason: StopReason, signal: Int32?) {
        guard let executor else { return }
        executor.queue.async { executor.stop(self, reason: reason, signal: signal) }
    }

    func setSuspended(_ suspended: Bool, completion: @escaping @Sendable (String?) -> Void) {
        guard let executor else { return completion("the queue's Slurm executor is gone") }
        executor.queue.async { executor.setSuspended(self, suspended, completion: completion) }
    }
}
