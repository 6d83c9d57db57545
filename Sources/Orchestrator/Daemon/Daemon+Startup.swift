import Dispatch
import Glibc
import OrchestratorAPI

// MARK: - The set-up that must succeed before anything runs, in the order `run` takes it

extension Daemon {
    /// Applies the configuration file, when there is one, beneath the flags. A bad file is
    /// fatal at start-up only (a reload keeps the settings in force).
    /// - Throws: ``StartupFailure``: the file cannot be read or has a bad line.
    static func readConfigurationFile(beneath commandLine: DaemonConfiguration) throws(StartupFailure) -> DaemonConfiguration {
        guard let path = commandLine.configurationFile else { return commandLine }
        let configuration: DaemonConfiguration
        do {
            configuration = commandLine.applying(
                file: try ConfigurationFile.load(path: path, required: commandLine.configurationFileRequired))
        } catch {
            throw StartupFailure(error.description, errno: error.errno)
        }
        DaemonLog.setLevel(configuration.logLevel)
        return configuration
    }

    /// Takes the lock that allows one daemon per state directory, creating the directory.
    /// - Returns: the lock, to hold until the daemon stops.
    /// - Throws: ``StartupFailure``: another daemon holds it (`EBUSY`), or a system call failed.
    static func lockStateDirectory(_ stateDirectory: String) throws(StartupFailure) -> StateDirectoryLock {
        do {
            return try StateDirectoryLock(stateDirectory: stateDirectory)
        } catch {
            switch error {
            case .heldByAnotherDaemon, .notAFile: throw StartupFailure(error.description, errno: error.errno)
            // The system call alone ("mkdir /srv/x/y: Not a directory") does not say what the path is for.
            case .system: throw StartupFailure("cannot use the state directory \(stateDirectory): \(error)", errno: error.errno)
            }
        }
    }

    /// The state directory's one name: absolute, with no symbolic link, `.`, `..` or trailing
    /// slash (realpath(3)), once it exists (it is made here when missing). Recovery finds a
    /// previous daemon's processes by this name: the job cgroups' subtree is named after it and
    /// a process-group job carries it in `ORCHD_STATE_DIR`. A restart that named the same
    /// directory another way (`state/`, a symbolic link) looked elsewhere, so what a killed
    /// daemon's job left running went on beside the job's retry. Resolved before the lock is
    /// taken, and the lock taken by this name: a symbolic link changed in between would
    /// otherwise have this daemon lock one directory and use another.
    /// - Returns: the resolved path.
    /// - Throws: ``StartupFailure``: the directory cannot be made, or realpath(3) failed (a
    ///   directory above it not searchable).
    static func resolveStateDirectory(_ stateDirectory: String) throws(StartupFailure) -> String {
        do {
            try StateDirectoryLock.createDirectory(stateDirectory)
        } catch {
            throw StartupFailure("cannot use the state directory \(stateDirectory): \(error)", errno: error.errno)
        }
        guard let resolved = realpath(stateDirectory, nil) else {
            let code = errno
            throw StartupFailure("cannot resolve the state directory \(stateDirectory): \(String(cString: strerror(code)))", errno: code)
        }
        defer { free(resolved) }
        let path = String(cString: resolved)
        // Another user's directory is theirs to fill with links to anything orchd then writes
        // (its lock, its database, its logs' directories): refused, as sshd refuses a key file
        // others may write.
        var info = stat()
        if stat(path, &info) == 0, info.st_uid != geteuid() {
            throw StartupFailure(
                "the state directory \(path) belongs to uid \(info.st_uid), not to orchd's user (uid \(geteuid())): its owner could replace the files orchd writes there; give orchd a directory of its own user",
                errno: EPERM)
        }
        return path
    }

    /// Creates the job log directory, `<state dir>/logs`. Under the system service each owner
    /// has a directory of their own in here, theirs and 0700: others may pass through (0711)
    /// to reach their own, but list nothing.
    /// - Returns: the directory's path.
    /// - Throws: ``StartupFailure``: mkdir(2) failed other than with `EEXIST`.
    static func makeLogDirectory(in stateDirectory: String) throws(StartupFailure) -> String {
        let logDirectory = stateDirectory + "/logs"
        let logDirectoryMode = LogDirectory.parentMode
        if mkdir(logDirectory, logDirectoryMode) != 0 && errno != EEXIST {
            let code = errno
            throw StartupFailure("cannot create \(logDirectory): \(String(cString: strerror(code)))", errno: code)
        }
        _ = chmod(logDirectory, logDirectoryMode)
        return logDirectory
    }

    /// Sets up containment, a cgroup per job where a cgroup2 subtree is writable, and logs
    /// what is in force.
    /// - Throws: ``StartupFailure`` (`EPERM`): `--containment cgroup` and no writable subtree.
    static func setUpContainment(_ configuration: DaemonConfiguration) throws(StartupFailure) -> Containment {
        let containment: Containment
        do {
            containment = try Containment.setUp(mode: configuration.containment, stateDirectory: configuration.stateDirectory)
        } catch {
            throw StartupFailure("--containment cgroup: \(error)", errno: EPERM)
        }
        if containment.subtree == nil && configuration.containment == .auto {
            DaemonLog.warning("containment: \(containment.summary); processes that leave a job's process group are found by their ORCHD_JOB_ID at cancel, timeout and stop only")
        } else {
            DaemonLog.info("containment: \(containment.summary)")
        }
        for earlier in containment.clearEarlierSubtrees() {
            let killed = earlier.killedGroups.isEmpty ? "" : " (killed the processes left in \(earlier.killedGroups.joined(separator: ", ")))"
            if earlier.removed && earlier.killedGroups.isEmpty {
                DaemonLog.info("containment: removed \(earlier.path), left by an earlier orchd of this state directory")
            } else if earlier.removed {
                DaemonLog.warning("containment: removed \(earlier.path)\(killed), left by an earlier orchd of this state directory")
            } else {
                DaemonLog.error("containment: cannot remove \(earlier.path)\(killed), left by an earlier orchd of this state directory: processes are left in it, or cgroups that are not orchd's")
            }
        }
        if let failure = containment.markSubtree() ?? containment.recordSubtree() {
            DaemonLog.warning("containment: \(failure); after a crash, a daemon started from another cgroup would not find this one's job cgroups")
        }
        return containment
    }

    /// The scheduler, not yet started: it recovers what a previous daemon left running when
    /// the ``ServiceGroup`` starts it (``recover(_:declaring:)``).
    static func makeScheduler(
        _ configuration: DaemonConfiguration, store: sending JobStore, logDirectory: String, containment: Containment,
        notifier: SystemdNotifier
    ) -> Scheduler {
        var schedulerConfiguration = Scheduler.Configuration(
            concurrency: configuration.concurrency, stateDirectory: configuration.stateDirectory, logDirectory: logDirectory,
            teardownGrace: configuration.teardownGrace, retentionAge: configuration.retentionAge,
            retentionCount: configuration.retentionCount, eventRetention: configuration.eventRetention)
        schedulerConfiguration.sync = configuration.sync
        // The system service runs each job as its submitter; a per-user daemon cannot.
        schedulerConfiguration.runJobsAsSubmitter = geteuid() == 0
        schedulerConfiguration.maxRunningPerUser = configuration.maxRunningPerUser
        // No stop: a stop would sync again, and a second fdatasync may succeed without the
        // lost writes (Linux reports a writeback error once), then acknowledge them. The jobs
        // are killed all the same, which needs no database: nothing orchd started may outlive
        // it, and recovery would kill them at the next start anyway.
        schedulerConfiguration.durabilityLost = { message in
            let killed = containment.killEverything()
            DaemonLog.error(
                "exiting without answering the requests it covered\(killed ? " and with every job killed" : ""); a restart recovers what is on disk")
            notifier.failed(errno: EIO, status: "failed: \(message)")
            _exit(Scheduler.durabilityLostExitStatus)
        }
        return Scheduler(store: store, configuration: schedulerConfiguration, containment: containment)
    }

    /// orchd's own observers of the scheduler's events.
    struct BuiltInObservers {
        /// Rate-limited `STATUS=` lines; knows whether the daemon is stopping.
        let statusReporter: StatusReporter
        /// One journal entry per event.
        let journal: JournalObserver
        /// Runs the queues' hook commands.
        let hooks: HookRunner

        /// Adds them before the scheduler starts, so they see every event.
        static func add(to scheduler: Scheduler, containment: Containment, notifier: SystemdNotifier) -> BuiltInObservers {
            let observers = BuiltInObservers(
                statusReporter: StatusReporter(scheduler: scheduler, notifier: notifier), journal: JournalObserver(),
                hooks: HookRunner(scheduler: scheduler, containment: containment))
            scheduler.observers.add(observers.statusReporter)
            scheduler.observers.add(observers.journal)
            scheduler.observers.add(observers.hooks)
            return observers
        }
    }

    /// The Varlink server on `socket`, not yet accepting: ``makeService(scheduler:configuration:startTime:concurrency:policy:reload:requestStop:)``
    /// with the live settings of `current`, which a reload (`io.orchd.Manager.Reload`) replaces,
    /// and `requestStop` for `io.orchd.Manager.Shutdown`.
    static func makeServer(
        socket: ListeningSocket, scheduler: Scheduler, current: LockedBox<DaemonConfiguration>,
        startTime: ContinuousClock.Instant, notifier: SystemdNotifier, requestStop: @escaping @Sendable (_ reason: String) -> Void
    ) -> VarlinkServer {
        let service = makeService(
            scheduler: scheduler, configuration: current.value, startTime: startTime,
            concurrency: { current.value.concurrency },
            policy: { [daemonUID = geteuid()] in
                let settings = current.value
                return AccessPolicy(daemonUID: daemonUID, allowedUsers: settings.allowedUsers, adminGroup: settings.adminGroup)
            },
            reload: {
                let failure = reload(current: current, scheduler: scheduler, notifier: notifier)
                return ManagerInterface.ReloadReply(concurrency: current.value.concurrency, error: failure)
            },
            requestStop: requestStop)
        return VarlinkServer(listeningFD: socket.fd, service: service)
    }
}

// MARK: - The running daemon's services

extension Daemon {
    /// The scheduler service's start: recovery first, so that nothing is served before what
    /// a previous daemon left running is settled; then the configuration file's queues.
    /// - Throws: what `Scheduler.start` or `declareConfiguredQueues` threw.
    static func recover(_ scheduler: Scheduler, declaring configuredQueues: [Scheduler.ConfiguredQueue]) throws {
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
    }

    /// Starts `services` in order.
    /// - Throws: ``StartupFailure`` (`EIO`) when one fails (the scheduler's recovery is the
    ///   one that can), after the group stopped those it started and the socket is closed.
    static func start(_ services: ServiceGroup, listeningOn socket: ListeningSocket) throws(StartupFailure) {
        do {
            try services.start()
        } catch {
            socket.removeFileIfOurs()
            socket.close()
            throw StartupFailure("cannot recover jobs: \(error.error)", errno: EIO)
        }
    }

    /// The readiness service's start: `READY=1` (sd_notify(3)) with the status line, and the
    /// `daemon_ready` event.
    static func announceReady(scheduler: Scheduler, notifier: SystemdNotifier) {
        blocking {
            notifier.ready(status: await scheduler.statusLine)
            await scheduler.recordDaemonEvent(.daemonReady)
        }
    }

    /// Logs the one line that says the daemon serves, and with what.
    static func logReady(
        _ configuration: DaemonConfiguration, socket: ListeningSocket, containment: Containment, watchdog: Watchdog?
    ) {
        DaemonLog.info(
            "orchd \(OrchdVersion.string) ready: socket \(configuration.socketPath)\(socket.isFromSystemd ? " (from systemd)" : ""), "
                + "state \(configuration.stateDirectory), concurrency \(configuration.concurrency), containment \(containment.name)"
                + (watchdog.map { ", watchdog ping every \(TimeSpan.format($0.tickInterval))" } ?? ""))
        if let limit = DescriptorRelief.softLimit(), limit < 256 {
            DaemonLog.warning(
                "the file descriptor limit is \(limit): orchd keeps the last \(VarlinkServer.reservedDescriptors) "
                    + "for jobs (closing idle clients there, refusing new ones in the last \(VarlinkServer.refusingDescriptors)), "
                    + "so few clients can connect; raise it (LimitNOFILE=, ulimit -n)")
        }
    }
}
