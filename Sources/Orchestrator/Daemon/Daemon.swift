import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

/// orchd's whole life: read the configuration file, lock the state directory, open the
/// store, recover, listen (or take the socket systemd passes), report ready, feed the
/// watchdog, reload on SIGHUP, run until SIGTERM/SIGINT, then stop cleanly.
///
/// Parts start in order and stop in reverse (swift-service-lifecycle): lock, store,
/// scheduler, server; signals arrive as dispatch sources and no work runs in a signal
/// handler.
public enum Daemon {
    /// Signals the daemon handles itself; blocked in every thread so that dispatch signal
    /// sources receive them.
    private static let handledSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGCHLD]

    /// Blocks the handled signals in the calling thread (and the threads it creates later)
    /// and ignores SIGPIPE. Call first thing in `main`, before any other thread exists.
    /// - Parameter arguments: the command line; SIGUSR1 is handled (blocked) only when it
    ///   holds the test-only ``DaemonConfiguration/testBlockControlQueueFlag``, so that
    ///   otherwise SIGUSR1 keeps its default action.
    public static func prepareSignals(arguments: [String] = []) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in handledSignals { sigaddset(&set, signal) }
        if arguments.contains(DaemonConfiguration.testBlockControlQueueFlag) { sigaddset(&set, SIGUSR1) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        // Writes to a vanished client fail with EPIPE instead of killing the daemon.
        Glibc.signal(SIGPIPE, SIG_IGN)
    }

    /// Runs the daemon until it is told to stop.
    /// - Parameter commandLine: paths, flags and the configuration file to read.
    /// - Returns: the process exit status: 0 after a clean stop, 1 when start-up failed
    ///   (the reason is logged and sent to systemd as `ERRNO=`/`STATUS=`).
    public static func run(configuration commandLine: DaemonConfiguration) -> Int32 {
        DaemonLog.setLevel(commandLine.logLevel)
        let notifier = SystemdNotifier()
        let startTime = ContinuousClock.now

        // Set up in step 3; a start-up that fails later leaves no cgroup subtree behind.
        var containmentInForce: Containment?
        func fail(_ message: String, errno code: Int32) -> Int32 {
            containmentInForce?.removeSubtree()
            DaemonLog.error(message)
            notifier.failed(errno: code, status: "failed: \(message)")
            return 1
        }

        // 0. The configuration file, beneath the flags. A bad file is fatal at start-up only.
        var configuration = commandLine
        if let path = commandLine.configurationFile {
            do {
                configuration = commandLine.applying(
                    file: try ConfigurationFile.load(path: path, required: commandLine.configurationFileRequired))
            } catch {
                return fail(error.description, errno: error.errno)
            }
            DaemonLog.setLevel(configuration.logLevel)
        MemoryTrimmer.limitArenas()
        }

        // 1. One daemon per state directory.
        let lock: StateDirectoryLock
        do {
            lock = try StateDirectoryLock(stateDirectory: configuration.stateDirectory)
        } catch {
            return fail(error.description, errno: error.errno)
        }

        // 2. The store.
        // Under the system service each owner has a directory of their own in here, theirs
        // and 0700: others may pass through (0711) to reach their own, but list nothing.
        let logDirectory = configuration.stateDirectory + "/logs"
        let logDirectoryMode: mode_t = geteuid() == 0 ? 0o711 : 0o700
        if mkdir(logDirectory, logDirectoryMode) != 0 && errno != EEXIST {
            return fail("cannot create \(logDirectory): \(String(cString: strerror(errno)))", errno: errno)
        }
        _ = chmod(logDirectory, logDirectoryMode)
        let store: JobStore
        let databasePath = configuration.stateDirectory + "/orchd.db"
        var checkedCompletely = true  // set by the verify closure, on this thread, before it is read
        do {
            // Before SQLite opens anything: it would replay a stray -wal into the file.
            try DatabaseIdentity.checkFiles(atPath: databasePath)
            try DatabaseFileMode.restrict(databasePath)
            store = try JobStore(database: try Database(path: databasePath) { db throws(DatabaseError) in
                checkedCompletely = try DatabaseIdentity.verify(db, checkBudget: DatabaseIdentity.startupCheckBudget)
            })
        } catch let error as DatabaseError where error.isCorrupt {
            // Not orchd's, not SQLite, or damaged: DatabaseIdentity's one line says which and what to do.
            return fail(error.message, errno: EIO)
        } catch {
            return fail(DatabaseOpenFailure.message(path: databasePath, error: error), errno: EIO)
        }
        DatabaseFileMode.restrictCompanions(databasePath)
        // A copy: the variable is the verify closure's, which the store (the scheduler's from
        // step 4 on) keeps.
        let checkedAll = checkedCompletely

        // 3. Containment: a cgroup per job where a cgroup2 subtree is writable.
        let containment: Containment
        do {
            containment = try Containment.setUp(mode: configuration.containment, stateDirectory: configuration.stateDirectory)
        } catch {
            return fail("--containment cgroup: \(error)", errno: EPERM)
        }
        containmentInForce = containment
        if containment.subtree == nil && configuration.containment == .auto {
            DaemonLog.warning("containment: \(containment.summary); processes that leave a job's process group are found by their ORCHD_JOB_ID at cancel, timeout and stop only")
        } else {
            DaemonLog.info("containment: \(containment.summary)")
        }

        // 4. The scheduler, after recovering what a previous daemon left running.
        var schedulerConfiguration = Scheduler.Configuration(
            concurrency: configuration.concurrency, stateDirectory: configuration.stateDirectory, logDirectory: logDirectory,
            teardownGrace: configuration.teardownGrace, retentionAge: configuration.retentionAge,
            retentionCount: configuration.retentionCount, eventRetention: configuration.eventRetention)
        schedulerConfiguration.sync = configuration.sync
        // The system service runs each job as its submitter; a per-user daemon cannot.
        schedulerConfiguration.runJobsAsSubmitter = geteuid() == 0
        schedulerConfiguration.maxRunningPerUser = configuration.maxRunningPerUser
        let scheduler = Scheduler(store: store, configuration: schedulerConfiguration, containment: containment)
        // Orphaned grandchildren of jobs are reparented to orchd and reaped here.
        let orphanReaper = OrphanReaper(queue: DispatchQueue(label: "orchd.orphans"))
        // Built-in observers, added before the scheduler starts so they see every event.
        let statusReporter = StatusReporter(scheduler: scheduler, notifier: notifier)
        let journal = JournalObserver()
        let hooks = HookRunner(scheduler: scheduler, containment: containment)
        scheduler.observers.add(statusReporter)
        scheduler.observers.add(journal)
        scheduler.observers.add(hooks)

        // 5. The control socket: the one systemd passes (orchd.socket), else our own.
        let listeningFD: Int32
        let socketActivated: Bool
        do {
            if let fd = try SocketActivation.listeningSocket() {
                listeningFD = fd
                socketActivated = true
                if let path = SocketActivation.boundPath(of: fd) { configuration.socketPath = path }
            } else {
                listeningFD = -1
                socketActivated = false
            }
        } catch {
            return fail(error.description, errno: error.errno)
        }
        let boundFD: Int32
        if socketActivated {
            boundFD = listeningFD
        } else {
            do {
                boundFD = try ControlSocket.bind(path: configuration.socketPath, everyUser: geteuid() == 0)
            } catch {
                return fail(error.description, errno: error.errno)
            }
        }
        // Remove the socket file at exit only if it is still the one we bound: a
        // socket-activated one belongs to systemd, and so does one orchd.socket put in its
        // place while we ran.
        var boundFile = stat()
        let ownsSocketFile = !socketActivated && stat(configuration.socketPath, &boundFile) == 0
        let removeSocketFile = { [socketPath = configuration.socketPath, boundFile] in
            var now = stat()
            guard ownsSocketFile, stat(socketPath, &now) == 0,
                now.st_dev == boundFile.st_dev, now.st_ino == boundFile.st_ino
            else { return }
            unlink(socketPath)
        }
        // What reloads change; GetInfo reports the live values.
        let current = LockedBox(configuration)
        warnAboutUnknownNames(configuration)
        let service = makeService(
            scheduler: scheduler, configuration: configuration, startTime: startTime,
            concurrency: { current.value.concurrency },
            policy: { [daemonUID = geteuid()] in
                let settings = current.value
                return AccessPolicy(daemonUID: daemonUID, allowedUsers: settings.allowedUsers, adminGroup: settings.adminGroup)
            },
            reload: {
                let failure = reload(current: current, scheduler: scheduler, notifier: notifier)
                return ManagerInterface.ReloadReply(concurrency: current.value.concurrency, error: failure)
            })
        let server = VarlinkServer(listeningFD: boundFD, service: service)

        // 6. The running daemon: its services, started in this order and stopped in reverse.
        let stopped = DispatchSemaphore(value: 0)
        let signalQueue = DispatchQueue(label: "orchd.signals")
        var signalSources: [any DispatchSourceSignal] = []
        var watchdog: Watchdog?
        containmentInForce = nil  // from now on the group removes the subtree
        let services = ServiceGroup([
            .init(name: "containment", stop: { containment.removeSubtree() }),
            .init(name: "orphan reaper", stop: { orphanReaper?.stop() }),
            // Stopped after the scheduler, whose last events may start hooks: running hooks
            // are torn down, not orphaned, and before the subtree holding their cgroups goes.
            .init(name: "hooks", stop: { hooks.stop() }),
            .init(
                name: "scheduler",
                start: {
                    // Recovery first: nothing is served before what a previous daemon left
                    // running is settled.
                    let configuredQueues = configuration.queues
                    let recovery = blocking { () async -> Result<Int, any Error> in
                        do {
                            let recovered = try await scheduler.start()
                            try await scheduler.declareConfiguredQueues(configuredQueues)
                            return .success(recovered)
                        } catch {
                            return .failure(error)
                        }
                    }
                    if case .failure(let error) = recovery { throw error }
                },
                stop: { blocking { await scheduler.flush() } }),
            .init(name: "control socket", start: { server.start() }, stop: {
                // The file first: a client that waits for the connections to close
                // (`orchctl shutdown --wait`) then finds the socket gone.
                removeSocketFile()
                server.stop()
            }),
            .init(
                name: "signal handlers",
                start: {
                    signalSources = installSignalHandlers(
                        on: signalQueue, scheduler: scheduler, statusReporter: statusReporter, notifier: notifier,
                        current: current, blockOnSIGUSR1: configuration.testBlockControlQueueOnSIGUSR1
                    ) { stopped.signal() }
                },
                stop: { for source in signalSources { source.cancel() } }),
            .init(name: "readiness", start: {
                blocking {
                    notifier.ready(status: await scheduler.statusLine)
                    await scheduler.recordDaemonEvent(.daemonReady)
                }
                if !checkedAll {
                    Self.checkInBackground(databasePath)
                }
            }),
            .init(
                name: "watchdog",
                start: {
                    watchdog = Watchdog(scheduler: scheduler, notifier: notifier)
                    watchdog?.start()
                },
                stop: { watchdog?.stop() }),
        ])
        do {
            try services.start()
        } catch {
            removeSocketFile()
            close(boundFD)
            return fail("cannot recover jobs: \(error.error)", errno: EIO)
        }
        DaemonLog.info(
            "orchd \(OrchdVersion.string) ready: socket \(configuration.socketPath)\(socketActivated ? " (from systemd)" : ""), "
                + "state \(configuration.stateDirectory), concurrency \(configuration.concurrency), containment \(containment.name)"
                + (watchdog.map { ", watchdog ping every \(TimeSpan.format($0.tickInterval))" } ?? ""))

        // 7. Run until stopped; then stop the services in reverse order.
        stopped.wait()
        services.stop()
        withExtendedLifetime((lock, statusReporter, journal, hooks)) {}
        DaemonLog.info("stopped")
        notifier.flush()
        return 0
    }

    /// Installs the handlers of SIGTERM and SIGINT (stop: drain, shut the scheduler down, make
    /// everything durable, then `stopped`), SIGHUP (reload) and, for tests, SIGUSR1 (wedge the
    /// control queue). The signals are blocked in every thread (``prepareSignals(arguments:)``),
    /// so they arrive only as these dispatch sources, and no work runs in a signal handler.
    /// - Returns: the sources, to cancel at the stop.
    private static func installSignalHandlers(
        on signalQueue: DispatchQueue, scheduler: Scheduler, statusReporter: StatusReporter, notifier: SystemdNotifier,
        current: LockedBox<DaemonConfiguration>, blockOnSIGUSR1: Bool, stopped: @escaping @Sendable () -> Void
    ) -> [any DispatchSourceSignal] {
        var signalSources: [any DispatchSourceSignal] = []
        for signal in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: signal, queue: signalQueue)
            source.setEventHandler {
                guard !statusReporter.beginStopping() else { return }
                DaemonLog.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                let drain = current.value.drainTimeout
                let extender = StopTimeoutExtender(
                    notifier: notifier, drainTimeout: drain, teardownGrace: current.value.teardownGrace)
                Task {
                    notifier.stopping(status: "stopping: " + (await scheduler.statusLine))
                    await scheduler.recordDaemonEvent(.daemonStopping)
                    extender.start()
                    await scheduler.shutdown(drainTimeout: drain)
                    // Durable before the server stops: held replies go out first.
                    await scheduler.flush()
                    extender.stop()
                    stopped()
                }
            }
            source.resume()
            signalSources.append(source)
        }
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: signalQueue)
        hangup.setEventHandler {
            guard !statusReporter.isStopping else {
                DaemonLog.info("received SIGHUP while stopping: not reloading")
                return
            }
            reload(current: current, scheduler: scheduler, notifier: notifier)
        }
        hangup.resume()
        signalSources.append(hangup)
        if blockOnSIGUSR1 {
            // Test-only (--test-block-control-queue-on-sigusr1): wedge the scheduler, so that
            // tests can see the watchdog withhold its pings.
            let block = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: signalQueue)
            block.setEventHandler {
                DaemonLog.warning("received SIGUSR1: blocking the control queue forever (test hook)")
                Task { await scheduler.blockForTests() }
            }
            block.resume()
            signalSources.append(block)
        }
        return signalSources
    }

    /// Finishes the start-up `quick_check` that ran out of its budget, on a connection of its
    /// own off the control queue. The daemon already serves, so damage found here is logged
    /// with the way out (as at start-up); SQLite reports damaged pages to every later
    /// statement that reads them too.
    private static func checkInBackground(_ path: String) {
        DaemonLog.info("the database is large: its integrity check goes on in the background")
        DispatchQueue.global(qos: .utility).async {
            do {
                let db = try Database(path: path)
                try DatabaseIdentity.quickCheck(db, budget: nil)
                DaemonLog.info("the database passed its integrity check (PRAGMA quick_check)")
            } catch let error as DatabaseError where error.isCorrupt {
                DaemonLog.error(error.message)
            } catch {
                DaemonLog.warning("cannot finish the database's integrity check: \(error)")
            }
        }
    }

    /// Applies the configuration file again (SIGHUP): `RELOADING=1` + `MONOTONIC_USEC=`,
    /// re-read the file, apply its settings beneath the flags, `READY=1` (sd_notify(3)). A
    /// file that cannot be read or parsed is logged and the current settings stay: a reload
    /// never stops the daemon.
    /// - Parameters:
    ///   - current: the settings in force; replaced on success.
    ///   - scheduler: reconfigured with the new concurrency and teardown grace.
    ///   - notifier: sends the reload's start and end.
    /// - Returns: why the file could not be applied, or `nil`.
    /// Logs a warning for each user or group name in the access settings that does not exist,
    /// for the system service (a per-user orchd ignores them).
    static func warnAboutUnknownNames(_ configuration: DaemonConfiguration) {
        let policy = AccessPolicy(daemonUID: geteuid(), allowedUsers: configuration.allowedUsers, adminGroup: configuration.adminGroup)
        guard policy.servesEveryUser else { return }
        for warning in policy.unknownNames { DaemonLog.warning(warning) }
    }

    @discardableResult
    static func reload(current: LockedBox<DaemonConfiguration>, scheduler: Scheduler, notifier: SystemdNotifier) -> String? {
        notifier.reloading(status: "reloading the configuration")
        let old = current.value
        var failure: String? = nil
        var reconfigured: DaemonConfiguration? = nil
        if let path = old.configurationFile {
            do {
                let new = old.applying(file: try ConfigurationFile.load(path: path, required: old.configurationFileRequired))
                DaemonLog.setLevel(new.logLevel)
                reconfigured = new
                current.value = new
                DaemonLog.info(
                    "reloaded \(path): concurrency \(new.concurrency), kill-grace \(TimeSpan.format(new.teardownGrace)), "
                        + "log-level \(new.logLevel.name)")
                warnAboutUnknownNames(new)
            } catch {
                failure = error.description
                DaemonLog.error("reload failed, keeping the current settings: \(error)")
            }
        } else {
            DaemonLog.info("received SIGHUP: no configuration file to reload")
        }
        // After reconfigure, so READY=1 means the new settings apply.
        let prefix = failure == nil ? "" : "reload failed, see the log; "
        Task { [reconfigured] in
            if let reconfigured {
                await scheduler.reconfigure(
                    concurrency: reconfigured.concurrency, teardownGrace: reconfigured.teardownGrace,
                    maxRunningPerUser: reconfigured.maxRunningPerUser)
                do {
                    try await scheduler.declareConfiguredQueues(reconfigured.queues)
                } catch {
                    DaemonLog.error("reload: cannot declare the configured queues: \(error)")
                }
            }
            notifier.ready(status: prefix + (await scheduler.statusLine))
        }
        return failure
    }

    /// Runs `body` and waits for its value: the synchronous wrapper the start-up and stop
    /// steps use on the main thread, which is not one of the concurrency pool's threads.
    @discardableResult
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let value = LockedBox<T?>(nil)
        Task {
            value.value = await body()
            done.signal()
        }
        done.wait()
        return value.value!
    }

    /// The Varlink service with one handler per method of orchd's interfaces.
    /// - Parameters:
    ///   - concurrency: the concurrency in force now (it changes at a reload); `nil`: the
    ///     configuration's.
    ///   - policy: who may call what, now (a reload changes it); `nil`: the defaults.
    ///   - reload: re-reads the configuration file (`io.orchd.Manager.Reload`).
    static func makeService(
        scheduler: Scheduler, configuration: DaemonConfiguration, startTime: ContinuousClock.Instant,
        concurrency: (@Sendable () -> Int)? = nil,
        policy: (@Sendable () -> AccessPolicy)? = nil,
        reload: @escaping @Sendable () -> ManagerInterface.ReloadReply
    ) -> VarlinkService {
        VarlinkService(
            handlers: [
                SubmitHandler(scheduler: scheduler),
                SubmitBatchHandler(scheduler: scheduler),
                RetryHandler(scheduler: scheduler),
                PruneHandler(scheduler: scheduler),
                ListQueuesHandler(scheduler: scheduler),
                SetQueueHandler(scheduler: scheduler),
                PauseQueuesHandler(scheduler: scheduler),
                ResumeQueuesHandler(scheduler: scheduler),
                SubscribeHandler(scheduler: scheduler),
                WaitDrainedHandler(scheduler: scheduler),
                GetHandler(scheduler: scheduler),
                ListHandler(scheduler: scheduler),
                CancelHandler(scheduler: scheduler),
                CancelMatchingHandler(scheduler: scheduler),
                RetryFailedHandler(scheduler: scheduler),
                HoldHandler(scheduler: scheduler),
                ReleaseHandler(scheduler: scheduler),
                EditHandler(scheduler: scheduler),
                SuspendHandler(scheduler: scheduler),
                ContinueHandler(scheduler: scheduler),
                AddQueueHandler(scheduler: scheduler),
                RemoveQueueHandler(scheduler: scheduler),
                WaitHandler(scheduler: scheduler),
                LogsHandler(scheduler: scheduler),
                PingHandler(),
                ReloadHandler(reload: reload),
                ShutdownHandler(),
                GetInfoHandler(
                    scheduler: scheduler, configuration: configuration, startTime: startTime,
                    concurrency: concurrency ?? { [configuration] in configuration.concurrency }),
                ServiceGetInfoHandler(),
                GetInterfaceDescriptionHandler(),
            ],
            policy: policy ?? { [daemonUID = geteuid()] in AccessPolicy(daemonUID: daemonUID) })
    }
}
