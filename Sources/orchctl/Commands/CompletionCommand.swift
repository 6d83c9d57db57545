import CommandLineParsing
/// `orchctl completion bash|zsh|fish`: prints a shell completion script written from the
/// command table (``CompletionScript``).
enum CompletionCommand: OrchctlCommand {
    static let name = "completion"
    static let spec = CommandSpec(
        name: name,
        abstract: "Print a shell completion script for bash, zsh or fish.",
        discussion: """
            The script completes every command and option, the words an option accepts, files for paths, and queue names and job IDs asked of orchd (with the --socket already typed). scripts/install.sh installs all three. To load one by hand:

            bash: source <(orchctl completion bash)   (or save it as /etc/bash_completion.d/orchctl)
            zsh:  orchctl completion zsh > "${fpath[1]}/_orchctl"   (or source <(orchctl completion zsh))
            fish: orchctl completion fish > ~/.config/fish/completions/orchctl.fish
            """,
        usage: "completion <shell>",
        arguments: [ArgumentSpec(name: "shell", kind: .choice(CompletionScript.Shell.allCases.map(\.rawValue)), arity: .one,
                                 help: "bash, zsh or fish.")],
        options: [],
        withoutJSON: "completion prints a shell script")

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        guard let word = invocation.arguments.first, let shell = CompletionScript.Shell(rawValue: word) else {
            throw CommandLineError(.missingArgument, "missing argument '<shell>': bash, zsh or fish", command: spec.name)
        }
        context.console.write(CompletionScript(commands: CommandTable.specs).script(for: shell))
        return .success
    }
}
