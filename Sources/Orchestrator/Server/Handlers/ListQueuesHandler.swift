import OrchestratorAPI

/// `io.orchd.Queues.List`: every queue with its settings and counts.
struct ListQueuesHandler: VarlinkMethodHandler {
    static let method = QueuesInterface.list
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            // `status --queue` and `pause Q` need their queues only, not every queue's hooks.
            let names = try call.parameters(QueuesInterface.NamesParameters.self).names.map(Set.init)
            let perUser = call.caller.isAdmin
            Task { [scheduler] in
                let queues = await scheduler.queues(perUser: perUser)
                let chosen = names.map { names in queues.filter { names.contains($0.name) } } ?? queues
                responder.reply(QueuesInterface.QueuesReply(queues: chosen))
            }
        } catch {
            responder.fail(error)
        }
    }
}
