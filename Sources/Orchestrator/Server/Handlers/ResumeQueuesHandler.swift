import OrchestratorAPI

/// `io.orchd.Queues.Resume`: lets paused queues start jobs again.
struct ResumeQueuesHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.resume
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        PauseQueuesHandler.setPaused(false, call, responder, scheduler)
    }
}
