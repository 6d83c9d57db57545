import Dispatch
import Foundation
import Glibc
import OrchestratorAPI

/// orchd's whole life: lock the state directory, open the store, recover, listen, report
/// ready, run until SIGTERM/SIGINT, then stop cleanly.
///
/// Parts start in order and stop in reverse (swift-service-lifecycle): lock, store,
/// scheduler, server; signals arrive as dispatch sources and no work runs in a signal
/// handler.
public enum Daemon {
    /// Signals the daemon handles itself; blocked in every thread so that dispatch signal
    /// sources receive them.
    private static let handledSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Blocks the handled signals in the calling thread (and the threads it creates later)
    /// and ignores SIGPIPE. Call first thing in `main`, before any other thread exists.
    public static func prepareSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in handledSignals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        // Writes to a vanished client fail with EPIPE instead of killing the daemon.
        Glibc.signal(SIGPIPE, SIG_IGN)
    }

    /// Runs the daemon until it is told to stop.
    /// - Parameter configuration: paths, concurrency, grace, log level.
    /// - Returns: the process exit status: 0 after a clean stop, 1 when start-up failed
    ///   (the reason is logged and sent to systemd as `ERRNO=`/`STATUS=`).
    public static func run(configuration: DaemonConfiguration) -> Int32 {
        DaemonLog.setLevel(configuration.logLevel)
        let notifier = SystemdNotifier()
        let startTime = ContinuousClock.now

        func fail(_ message: String, errno code: Int32) -> Int32 {
            DaemonLog.error(message)
            notifier.failed(errno: code, status: "failed: \(message)")
            return 1
        }

        // 1. One daemon per state directory.
        let lock: StateDirectoryLock
        do {
            lock = try StateDirectoryLock(stateDirectory: configuration.stateDirectory)
        } catch {
            return fail(error.description, errno: error.errno)
        }

        // 2. The store.
        let logDirectory = configuration.stateDirectory + "/logs"
        if mkdir(logDirectory, 0o700) != 0 && errno != EEXIST {
            return fail("cannot create \(logDirectory): \(String(cString: strerror(errno)))", errno: errno)
        }
        let store: JobStore
        do {
            store = try JobStore(database: try Database(path: configuration.stateDirectory + "/orchd.db"))
        } catch {
            return fail("cannot open the job database in \(configuration.stateDirectory): \(error)", errno: EIO)
        }

        // 3. The scheduler, after recovering what a previous daemon left running.
        let scheduler = Scheduler(store: store, configuration: .init(
            concurrency: configuration.concurrency, stateDirectory: configuration.stateDirectory, logDirectory: logDirectory, teardownGrace: configuration.teardownGrace))
        // Built-in observers, added before the scheduler starts so they see every event.
        let statusReporter = StatusReporter(scheduler: scheduler, notifier: notifier)
        let journal = JournalObserver()
        let hooks = HookRunner(scheduler: scheduler)
        scheduler.observers.add(statusReporter)
        scheduler.observers.add(journal)
        scheduler.observers.add(hooks)

        // 4. The control socket.
        let listeningFD: Int32
        do {
            listeningFD = try ControlSocket.bind(path: configuration.socketPath)
        } catch {
            return fail(error.description, errno: error.errno)
        }
        let service = makeService(scheduler: scheduler, configuration: configuration, startTime: startTime)
        let server = VarlinkServer(listeningFD: listeningFD, service: service)

        let started = DispatchSemaphore(value: 0)
        let recovery = LockedBox<Result<Int, any Error>?>(nil)
        scheduler.start { result in
            recovery.value = result
            started.signal()
        }
        started.wait()
        if case .failure(let error)? = recovery.value {
            unlink(configuration.socketPath)
            close(listeningFD)
            return fail("cannot recover jobs: \(error)", errno: EIO)
        }
        server.start()

        // 5. Ready: the database is open, recovery done, the socket listens.
        let stopped = DispatchSemaphore(value: 0)
        let signalQueue = DispatchQueue(label: "orchd.signals")
        var signalSources: [any DispatchSourceSignal] = []
        for signal in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: signal, queue: signalQueue)
            source.setEventHandler {
                guard !statusReporter.beginStopping() else { return }
                DaemonLog.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), stopping")
                scheduler.controlQueue.async {
                    notifier.stopping(status: "stopping: " + scheduler.statusLine)
                }
                scheduler.recordDaemonEvent("daemon_stopping")
                scheduler.shutdown {
                    stopped.signal()
                }
            }
            source.resume()
            signalSources.append(source)
        }
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: signalQueue)
        hangup.setEventHandler { DaemonLog.info("received SIGHUP: no configuration file to reload") }
        hangup.resume()
        signalSources.append(hangup)

        scheduler.controlQueue.sync {
            notifier.ready(status: scheduler.statusLine)
        }
        scheduler.recordDaemonEvent("daemon_ready")
        DaemonLog.info("orchd \(OrchdVersion.string) ready: socket \(configuration.socketPath), state \(configuration.stateDirectory), concurrency \(configuration.concurrency)")

        // 6. Run until stopped; then stop in reverse order.
        stopped.wait()
        scheduler.flush()
        server.stop()
        unlink(configuration.socketPath)
        for source in signalSources { source.cancel() }
        withExtendedLifetime((lock, statusReporter, journal, hooks)) {}
        DaemonLog.info("stopped")
        return 0
    }

    /// The Varlink service with one handler per method of orchd's interfaces.
    static func makeService(
        scheduler: Scheduler, configuration: DaemonConfiguration, startTime: ContinuousClock.Instant
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
                WaitHandler(scheduler: scheduler),
                LogsHandler(scheduler: scheduler),
                PingHandler(),
                GetInfoHandler(scheduler: scheduler, configuration: configuration, startTime: startTime),
                ServiceGetInfoHandler(),
                GetInterfaceDescriptionHandler(),
            ],
            daemonUID: geteuid())
    }
}
