import CommandLineParsing
import OrchestratorAPI

/// `orchctl pause [Q...]`: queues start nothing new; running jobs go on.
enum PauseCommand: OrchctlCommand {
    static let name = "pause"
    static let spec = CommandSpec(
        name: name,
        abstract: "Pause queues: start none of their jobs until resumed.",
        discussion: "Running jobs go on; queued jobs stay queued. Without a queue name, pauses every queue. Prints each queue that was paused (and, for queues named, each that already was).",
        usage: "pause [<queue> ...]",
        arguments: [ArgumentSpec(name: "queue", kind: .queueName, arity: .zeroOrMore, help: "The queues to pause. (default: every queue)")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        try QueuePausing.run(invocation, context: context, pause: true)
    }
}

/// `orchctl resume [Q...]`: paused queues start jobs again.
enum ResumeCommand: OrchctlCommand {
    static let name = "resume"
    static let spec = CommandSpec(
        name: name,
        abstract: "Resume paused queues.",
        discussion: "Without a queue name, resumes every queue. Prints each queue that was resumed (and, for queues named, each that was not paused).",
        usage: "resume [<queue> ...]",
        arguments: [ArgumentSpec(name: "queue", kind: .queueName, arity: .zeroOrMore, help: "The queues to resume. (default: every queue)")],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        try QueuePausing.run(invocation, context: context, pause: false)
    }
}

/// What `pause` and `resume` share.
enum QueuePausing {
    static func run(_ invocation: Invocation, context: CommandContext, pause: Bool) throws -> ExitCode {
        // Each once: `pause a a` pauses a, and says so, once.
        var seen: Set<QueueName> = []
        let names = invocation.arguments.compactMap(QueueName.init(rawValue:)).filter { seen.insert($0).inserted }
        let connection = try context.connect(invocation)
        let parameters = QueuesInterface.NamesParameters(names: names.isEmpty ? nil : names)
        // The queues before the change, so the output says what changed and what already
        // was: only those named.
        let before = try connection.call(QueuesInterface.list, parameters).queues
        let method = pause ? QueuesInterface.pause : QueuesInterface.resume
        let after = try connection.call(method, parameters).queues
        if invocation.global.json {
            context.console.write(try JSONOutput.text(after))
        } else {
            context.console.write(changes(before: before, after: after, pause: pause, named: !names.isEmpty))
        }
        return .success
    }

    /// One line per queue of the reply: `paused build`, `build was already paused`, or `build
    /// was not paused`. Without names (every queue) only the queues that changed, or one line
    /// saying none did: a bare `resume` listed every queue that had not been paused.
    static func changes(before: [QueueInfo], after: [QueueInfo], pause: Bool, named: Bool = true) -> String {
        let verb = pause ? "paused" : "resumed"
        guard !after.isEmpty else { return "No queues to \(pause ? "pause" : "resume").\n" }
        var text = ""
        for queue in after {
            let was = before.first { $0.name == queue.name }?.paused
            if was == pause {
                if named { text += "\(queue.name) was \(pause ? "already paused" : "not paused")\n" }
            } else {
                text += "\(verb) \(queue.name)\n"
            }
        }
        if text.isEmpty { return pause ? "Every queue was already paused.\n" : "No queue was paused.\n" }
        return text
    }
}
