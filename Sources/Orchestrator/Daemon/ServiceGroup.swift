/// The running daemon as a list of services, started in order and stopped in reverse
/// (swift-service-lifecycle's `ServiceGroup` is the model; a package cannot be used here).
///
/// Set-up that must succeed before anything runs (the lock, the database, containment, the
/// bound socket) happens before the group starts; each service is a part that runs until the
/// daemon stops: the scheduler, the server, the signal handlers, readiness, the watchdog.
final class ServiceGroup {
    /// One part of the running daemon.
    struct Service {
        /// Names the service in the log.
        var name: String
        /// Starts it; a throw stops the services started before it, in reverse.
        var start: () throws -> Void = {}
        /// Stops it; called once, only when `start` returned.
        var stop: () -> Void = {}
    }

    private let services: [Service]
    private var running: [Service] = []

    /// Creates a group that starts `services` in the order given.
    init(_ services: [Service]) {
        self.services = services
    }

    /// Starts every service in order. When one fails, the ones already started are stopped in
    /// reverse order and its error is thrown.
    /// - Throws: ``Failure``: which service failed, and why.
    func start() throws(Failure) {
        for service in services {
            do {
                try service.start()
            } catch {
                stop()
                throw Failure(service: service.name, error: error)
            }
            running.append(service)
        }
    }

    /// Stops the started services in reverse order of their start.
    func stop() {
        while let service = running.popLast() {
            DaemonLog.debug("stopping \(service.name)")
            service.stop()
        }
    }

    /// A service that could not start.
    struct Failure: Error, CustomStringConvertible {
        /// The service's name.
        var service: String
        /// What its start threw.
        var error: any Error

        var description: String { "\(service): \(error)" }
    }
}
