import CommandLineParsing
import OrchestratorAPI

/// `orchctl queues`: every queue with its settings and job counts.
enum QueuesCommand: OrchctlCommand {
    static let name = "queues"
    static let spec = CommandSpec(
        name: name,
        abstract: "List queues with their settings and job counts.",
        discussion: "Lists every queue that has jobs or settings. RETRY BASE/CAP is the backoff before the first retry (doubled for each further one) and its upper limit. Queues with hooks (see 'orchctl queue set --help') have them listed under the table, one per line. With --json, each queue's hooks object maps event kinds to commands.",
        usage: "queues",
        arguments: [],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let queues = try connection.call(QueuesInterface.list, QueuesInterface.NamesParameters()).queues
        if invocation.global.json {
            context.console.write(try JSONOutput.text(queues))
        } else {
            let owners = QueueText.perUserOwners(queues)
            context.console.write(QueueText.table(queues, userNames: owners.isEmpty ? [:] : try connection.userNames(owners)))
        }
        return .success
    }
}
