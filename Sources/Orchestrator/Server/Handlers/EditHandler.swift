import FoundationEssentials
import OrchestratorAPI

/// `io.orchd.Jobs.Edit`: changes a job that has not started.
struct EditHandler: VarlinkMethodHandler {
    static let method = JobsInterface.edit
    let scheduler: Scheduler

    func handle(_ call: VarlinkMethodCall, responder: VarlinkResponder) {
        do throws(VarlinkError) {
            let parameters = try call.parameters(JobsInterface.EditParameters.self)
            var edit = Scheduler.JobEdit(priority: parameters.priority, queue: parameters.queue, name: parameters.name)
            if let text = parameters.notBefore {
                guard let date = Timestamp.parse(text) else { throw VarlinkError.invalidParameter("notBefore") }
                edit.notBefore = date
            }
            guard edit.priority != nil || edit.queue != nil || edit.notBefore != nil || edit.name != nil else {
                throw VarlinkError.invalidParameter("priority")
            }
            let caller = call.caller
            let change = edit
            responder.complete({ [scheduler] () async throws(SchedulerError) in
                try await scheduler.edit(parameters.id, change, by: caller)
            }) { JobsInterface.JobReply(job: $0) }
        } catch {
            responder.fail(error)
        }
    }
}
