#if canImport(Glibc)
import Glibc
#endif
import OrchestratorAPI

/// `orchctl submit`: queues one job, capturing the caller's environment and directory.
enum SubmitCommand: OrchctlCommand {
    static let spec = CommandSpec(
        name: "submit",
        abstract: "Queue a command as a job.",
        discussion: "The words after '--' are the job's argument vector, run exactly as given without a shell; --shell runs a string with /bin/sh -c instead. The job gets your environment and working directory. Prints the new job's ID alone, so 'id=$(orchctl submit -- make)' works.",
        usage: "submit [<options>] (--shell <string> | -- <argv> ...)",
        arguments: [ArgumentSpec(name: "argv", kind: .text, arity: .zeroOrMore,
                                 help: "The command and its arguments, after '--'; passed verbatim, options included.")],
        options: [
            .value("shell", "string", help: "Run this string with /bin/sh -c instead of an argument vector."),
            .value("queue", "queue", kind: .queueName, help: "The queue to run the job in.", default: "default"),
            .value("priority", "n", kind: .integer, help: "Higher runs first; equal priorities run in submission order.", default: "0"),
            .value("name", "name", help: "A name to show for the job."),
            .value("label", "key=value", kind: .keyValue, help: "A label to attach to the job.", repeatable: true),
            .value("cwd", "dir", help: "The directory the job starts in.", default: "the current directory"),
            .value("env", "key=value", kind: .keyValue, help: "Set a variable in the job's environment, over your own.", repeatable: true),
            .flag("wait", help: "Wait for the job to finish and exit with its status (128+SIGNAL when signaled)."),
        ],
        takesTrailingArguments: true)

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let jobSpec = try makeSpec(invocation, context: context)
        let connection = try context.connect(invocation)
        let submitted = try connection.call("io.orchd.Jobs.Submit", JobsInterface.SubmitParameters(spec: jobSpec), returning: JobsInterface.JobReply.self).job
        guard invocation.flag("wait") else {
            if invocation.global.json {
                context.console.write(try JSONOutput.text(submitted))
            } else {
                context.console.print(submitted.id.description)
            }
            return .success
        }
        // The ID goes out first, so a caller sees which job it is waiting for.
        if !invocation.global.json { context.console.print(submitted.id.description) }
        let finished = try connection.call("io.orchd.Jobs.Wait", JobsInterface.IDsParameters(ids: [submitted.id]), returning: JobsInterface.JobsReply.self).jobs
        guard let job = finished.first(where: { $0.id == submitted.id }), let result = job.state.result else {
            throw CommandFailure("orchd answered the wait for job \(submitted.id) without its result")
        }
        if invocation.global.json { context.console.write(try JSONOutput.text(job)) }
        return ExitCode(result.shellExitStatus)
    }

    /// Builds the job spec from the command line and the caller's environment and directory.
    /// - Throws: ``CommandLineError`` when the command is missing or given twice, or `--cwd`
    ///   is not a directory.
    static func makeSpec(_ invocation: Invocation, context: CommandContext) throws(CommandLineError) -> JobSpec {
        let command: JobCommand
        switch (invocation.value("shell"), invocation.trailing) {
        case (let shell?, nil):
            guard !shell.isEmpty else {
                throw CommandLineError(.invalidValue, "invalid value for option '--shell': the command is empty", command: spec.name)
            }
            command = .shell(shell)
        case (nil, let argv?) where !argv.isEmpty:
            guard !argv[0].isEmpty else {
                throw CommandLineError(.invalidValue, "the command after '--' is empty", command: spec.name)
            }
            command = .argv(argv)
        case (_?, _?):
            throw CommandLineError(.conflictingOptions, "give either --shell or a command after '--', not both", command: spec.name)
        default:
            throw CommandLineError(.missingArgument, "no command to run: give --shell <string> or -- <argv> ...", command: spec.name)
        }

        let cwd = try workingDirectory(invocation.value("cwd"), current: context.currentDirectory)
        var environment = context.environment
        environment.merge(invocation.keyValues("env")) { _, new in new }
        let jobSpec = JobSpec(
            command: command,
            cwd: cwd,
            environment: environment,
            queue: invocation.value("queue").flatMap(QueueName.init(rawValue:)) ?? .default,
            priority: invocation.integer("priority") ?? 0,
            name: invocation.value("name"),
            labels: invocation.keyValues("label"))
        do {
            try jobSpec.validate()
        } catch {
            throw CommandLineError(.invalidValue, error.message, command: spec.name)
        }
        return jobSpec
    }

    /// `--cwd` made absolute against the current directory and checked to be a directory,
    /// or the current directory itself.
    private static func workingDirectory(_ option: String?, current: String?) throws(CommandLineError) -> String {
        guard let option else {
            guard let current else {
                throw CommandLineError(.invalidValue, "cannot read the current directory; give --cwd <dir>", command: spec.name)
            }
            return current
        }
        var path = option
        if !path.hasPrefix("/") {
            guard let current else {
                throw CommandLineError(.invalidValue, "cannot read the current directory to resolve --cwd '\(option)'; give an absolute path", command: spec.name)
            }
            path = current + "/" + path
        }
        path = normalized(path)
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw CommandLineError(.invalidValue, "invalid value for option '--cwd': \(path): \(reason)", command: spec.name)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandLineError(.invalidValue, "invalid value for option '--cwd': \(path) is not a directory", command: spec.name)
        }
        return path
    }

    /// `path` without `.`, `..` and repeated slashes, resolved lexically (as `cd -L` does), so
    /// the job's recorded directory reads as the user meant it.
    static func normalized(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }
}
