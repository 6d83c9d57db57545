import CommandLineParsing
import OrchestratorAPI

/// `orchctl info`: the daemon's version, uptime, paths, job counts, containment and sync.
enum InfoCommand: OrchctlCommand {
    static let name = "info"
    static let spec = CommandSpec(
        name: name,
        abstract: "Show orchd's version, paths, jobs, containment, sync.",
        discussion: "With --json, prints io.orchd.Manager.GetInfo's reply as one JSON object (version, pid, uptimeUSec, stateDirectory, socket, concurrency, jobs {waiting, queued, running, finished}, containment, cgroup, sync, syncIntervalUSec) and jsonVersion, the version of this shape: fields may be added, and jsonVersion grows when one changes meaning or goes.",
        usage: "info",
        arguments: [],
        options: [])

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let connection = try context.connect(invocation)
        let info = try connection.call(ManagerInterface.getInfo, VarlinkNoParameters())
        if invocation.global.json {
            context.console.write(try JSONOutput.text(Versioned(info)))
        } else {
            context.console.write(render(info))
        }
        return .success
    }

    /// The text form: aligned `key: value` lines.
    static func render(_ info: ManagerInterface.InfoReply) -> String {
        let jobs = info.jobs
        return KeyValueLines.render([
            ("version", info.version),
            ("orchctl version", OrchdVersion.string),
            ("pid", String(info.pid)),
            ("uptime", TimeSpan.format(Duration(microseconds: info.uptimeUSec))),
            ("state directory", info.stateDirectory),
            ("socket", info.socket),
            ("concurrency", "\(info.concurrency) by default (a queue's own: orchctl queues)"),
            ("jobs", [(jobs.running, "running"), (jobs.queued, "queued"), (jobs.waiting, "waiting"), (jobs.finished, "finished")]
                .map { count, state in "\(JobTable.grouped(count)) \(state)" }.joined(separator: ", ")),
            ("containment", info.cgroup.map { "\(info.containment) \($0)" } ?? info.containment),
            ("sync", info.syncIntervalUSec.map { "\(info.sync), every \(TimeSpan.format(Duration(microseconds: $0)))" } ?? info.sync),
        ])
    }

    /// The version of `info --json`'s shape.
    static let jsonVersion = 1

    /// The reply with ``jsonVersion`` beside its fields.
    struct Versioned: Encodable {
        let info: ManagerInterface.InfoReply

        init(_ info: ManagerInterface.InfoReply) { self.info = info }

        private enum Key: String, CodingKey { case jsonVersion }

        func encode(to encoder: any Encoder) throws {
            try info.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(InfoCommand.jsonVersion, forKey: .jsonVersion)
        }
    }
}
