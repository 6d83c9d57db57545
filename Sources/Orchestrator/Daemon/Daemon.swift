import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

/// orchd's whole life: read the configuration file, lock the state directory, open the
/// store, recover, listen (or take the socket systemd passes), report ready, feed the
/// watchdog, reload on SIGHUP, run until SIGTERM/SIGINT, then stop cleanly.
///
/// `run` takes the set-up that must succeed first as named steps (`Daemon+Startup.swift`,
/// `DatabaseStartup`, `ListeningSocket`), then runs the daemon as a ``ServiceGroup`` whose
/// services start in order and stop in reverse (swift-service-lifecycle); signals arrive as
/// dispatch sources (``SignalHandlers``) and no work runs in a signal handler.
public enum Daemon {
    /// Signals the daemon handles itself; blocked in every thread so that dispatch signal
    /// sources (and the orphan reaper's signalfd, for SIGCHLD) receive them.
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

    /// Runs the daemon until it is told to stop: the set-up that must succeed before anything
    /// runs, step by step (``StartupFailure`` ends start-up), then the running daemon, a
    /// ``ServiceGroup`` started in order and, after the stop signal, stopped in reverse.
    /// - Parameter commandLine: paths, flags and the configuration file to read.
    /// - Returns: the process exit status: 0 after a clean stop, 1 when start-up failed
    ///   (the reason is logged and sent to systemd as `ERRNO=`/`STATUS=`).
    public static func run(configuration commandLine: DaemonConfiguration) -> Int32 {
        MemoryTrimmer.limitArenas()
        DaemonLog.setLevel(commandLine.logLevel)
        let notifier = SystemdNotifier()
        let startTime = ContinuousClock.now
        // Set once containment is; a start-up that fails later leaves no cgroup subtree behind.
        var containmentInForce: Containment?
        do throws(StartupFailure) {
            var configuration = try readConfigurationFile(beneath: commandLine)
            configuration.stateDirectory = try resolveStateDirectory(configuration.stateDirectory)
            let lock = try lockStateDirectory(configuration.stateDirectory)
            let logDirectory = try makeLogDirectory(in: configuration.stateDirectory)
            let databasePath = configuration.stateDirectory + "/orchd.db"
            let (store, checkedAll) = try DatabaseStartup.open(path: databasePath)
            let containment = try setUpContainment(configuration)
            containmentInForce = containment
            let scheduler = makeScheduler(
                configuration, store: store, logDirectory: logDirectory, containment: containment, notifier: notifier)
            // Orphaned grandchildren of jobs are reparented to orchd and reaped here.
            let orphanReaper = OrphanReaper(queue: DispatchQueue(label: "orchd.orphans"))
            let observers = BuiltInObservers.add(to: scheduler, containment: containment, notifier: notifier)
            let socket = try ListeningSocket.take(configuredPath: configuration.socketPath)
            configuration.socketPath = socket.path
            // What reloads change; GetInfo reports the live values.
            let current = LockedBox(configuration)
            warnAboutUnknownNames(configuration)
            let stopped = DispatchSemaphore(value: 0)
            let signals = SignalHandlers(
                scheduler: scheduler, statusReporter: observers.statusReporter, notifier: notifier, current: current,
                blockOnSIGUSR1: configuration.testBlockControlQueueOnSIGUSR1) { stopped.signal() }
            let server = makeServer(
                socket: socket, scheduler: scheduler, current: current, startTime: startTime, notifier: notifier,
                requestStop: signals.requestStop)
            // What waits for descriptors gets those the control socket's idle connections hold.
            DescriptorRelief.process.setHandler { [weak server] in server?.closeIdleConnections() }
            var watchdog: Watchdog?

            // The running daemon: its services, started in this order and stopped in reverse.
            let services = ServiceGroup([
                .init(name: "containment", stop: { containment.removeSubtree() }),
                .init(name: "orphan reaper", stop: { orphanReaper?.stop() }),
                // Last of all that runs: whatever no job's or hook's teardown found.
                .init(name: "leftover processes", stop: {
                    // The stop's own extensions of systemd's stop timeout ended with the drain.
                    containment.tearDownLeftoverDescendants(grace: current.value.teardownGrace) { longest in
                        notifier.send("EXTEND_TIMEOUT_USEC=\(longest.microseconds)")
                    }
                }),
                // Stopped after the scheduler, whose last events may start hooks: running hooks
                // are torn down, not orphaned, and before the subtree holding their cgroups goes.
                .init(name: "hooks", stop: { observers.hooks.stop() }),
                .init(
                    name: "scheduler", start: { try recover(scheduler, declaring: configuration.queues) },
                    stop: {
                        blocking {
                            await scheduler.flush()
                            await scheduler.checkpointAtStop()
                        }
                    }),
                .init(name: "control socket", start: { server.start() }, stop: {
                    // The file first: a client that waits for the connections to close
                    // (`orchctl shutdown --wait`) then finds the socket gone.
                    socket.removeFileIfOurs()
                    server.stop()
                }),
                .init(name: "signal handlers", start: { signals.start() }, stop: { signals.stop() }),
                .init(name: "readiness", start: {
                    announceReady(scheduler: scheduler, notifier: notifier)
                    if !checkedAll { DatabaseStartup.checkInBackground(databasePath) }
                }),
                .init(
                    name: "watchdog",
                    start: {
                        watchdog = Watchdog(scheduler: scheduler, notifier: notifier)
                        watchdog?.start()
                    },
                    stop: { watchdog?.stop() }),
            ])
            containmentInForce = nil  // from now on the group removes the subtree
            try start(services, listeningOn: socket)
            logReady(configuration, socket: socket, containment: containment, watchdog: watchdog)

            // Run until stopped; then stop the services in reverse order.
            stopped.wait()
            services.stop()
            withExtendedLifetime((lock, observers)) {}
        } catch {
            containmentInForce?.removeSubtree()
            DaemonLog.error(error.message)
            notifier.failed(errno: error.errno, status: "failed: \(error.message)")
            return 1
        }
        DaemonLog.info("stopped")
        if !notifier.flush() {
            DaemonLog.warning("the service manager did not read its notification socket for 5 s; exiting without it")
        }
        return 0
    }

    /// Why start-up failed: the message logged and sent to systemd as `STATUS=failed: …`,
    /// and the errno sent as `ERRNO=` (sd_notify(3)).
    struct StartupFailure: Error {
        /// One line that says what failed and, where there is one, the way out.
        var message: String
        /// The errno for `ERRNO=`.
        var errno: Int32

        init(_ message: String, errno: Int32) {
            self.message = message
            self.errno = errno
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
                    maxRunningPerUser: reconfigured.maxRunningPerUser, retentionAge: reconfigured.retentionAge,
                    retentionCount: reconfigured.retentionCount, eventRetention: reconfigured.eventRetention)
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
    ///   - requestStop: begins the stop, for the reason given (`io.orchd.Manager.Shutdown`).
    static func makeService(
        scheduler: Scheduler, configuration: DaemonConfiguration, startTime: ContinuousClock.Instant,
        concurrency: (@Sendable () -> Int)? = nil,
        policy: (@Sendable () -> AccessPolicy)? = nil,
        reload: @escaping @Sendable () -> ManagerInterface.ReloadReply,
        requestStop: @escaping @Sendable (_ reason: String) -> Void
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
                GetUserNamesHandler(),
                ReloadHandler(reload: reload),
                ShutdownHandler(requestStop: requestStop),
                GetInfoHandler(
                    scheduler: scheduler, configuration: configuration, startTime: startTime,
                    concurrency: concurrency ?? { [configuration] in configuration.concurrency }),
                ServiceGetInfoHandler(),
                GetInterfaceDescriptionHandler(),
            ],
            policy: policy ?? { [daemonUID = geteuid()] in AccessPolicy(daemonUID: daemonUID) },
            unanswered: scheduler.unansweredRequests)
    }
}
