/// Writes all of orchctl's help text from the command table, and orchd's from its one
/// command, in the swift-argument-parser layout: `OVERVIEW:`, `USAGE:`, `ARGUMENTS:`,
/// `OPTIONS:`, `SUBCOMMANDS:`.
public struct HelpRenderer: Sendable {
    /// The program name in usage lines.
    public var program = "orchctl"
    /// The commands, for the top-level `SUBCOMMANDS:` section.
    public var commands: [CommandSpec]
    /// The options every command accepts, listed after its own and before `-h, --help`.
    public var globalOptions = GlobalOptions.specs
    /// Total line width help is wrapped to, in columns.
    public var width = 80

    /// Creates a renderer.
    /// - Parameters:
    ///   - program: the program name in usage lines.
    ///   - commands: the command table (empty for a program without command words).
    ///   - globalOptions: the options every command accepts (orchctl's `--socket` and
    ///     `--json` by default).
    public init(program: String = "orchctl", commands: [CommandSpec], globalOptions: [OptionSpec] = GlobalOptions.specs) {
        self.program = program
        self.commands = commands
        self.globalOptions = globalOptions
    }

    /// Help starts in this column; labels are indented by 2.
    private let helpColumn = 26

    /// The top-level help (`orchctl --help`).
    public func rootHelp() -> String {
        var text = "OVERVIEW: Control orchd, the task orchestration daemon.\n\n"
        text += "orchd keeps a durable queue of commands and runs them, N at a time, as a systemd\n"
        text += "service. orchctl submits jobs to it and reports on them over its Unix socket.\n\n"
        text += "USAGE: \(rootUsage)\n\n"
        text += "OPTIONS:\n"
        for option in GlobalOptions.specs + [GlobalOptions.version, GlobalOptions.help] {
            text += row(option.label, helpText(option))
        }
        text += "\nSUBCOMMANDS:\n"
        for command in commands {
            text += row(command.name, command.abstract)
        }
        text += "\n  See '\(program) help <subcommand>' for detailed help.\n"
        return text
    }

    /// The help of one command (`orchctl COMMAND --help`).
    public func help(for command: CommandSpec) -> String {
        var text = "OVERVIEW: \(command.abstract)\n\n"
        if let discussion = command.discussion {
            text += wrap(discussion, indent: 0) + "\n"
        }
        text += hanging("USAGE: \(usage(for: command))", indent: 2)
        if !command.arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in command.arguments {
                text += row(argument.label, argument.help)
            }
        }
        text += "\nOPTIONS:\n"
        for option in command.options + globalOptions.filter(command.accepts(global:)) + [GlobalOptions.help] where !option.isHidden {
            text += row(option.label, helpText(option))
        }
        if command.isGroup {
            text += "\nSUBCOMMANDS:\n"
            for subcommand in command.subcommands {
                text += row(subcommand.word, subcommand.abstract)
            }
            text += "\n  See '\(program) help \(command.name) <subcommand>' for detailed help.\n"
        }
        return text
    }

    /// The usage line of `command`, without the `USAGE:` prefix.
    public func usage(for command: CommandSpec) -> String {
        "\(program) \(command.usage)"
    }

    /// The top-level usage line.
    public var rootUsage: String { "\(program) [--socket <path>] [--json] <subcommand>" }

    // MARK: - Layout

    /// An option's help sentence with its default and repeatability.
    private func helpText(_ option: OptionSpec) -> String {
        var text = option.help
        if option.isRepeatable { text += " Can be repeated." }
        if let value = option.defaultValue { text += " (default: \(value))" }
        return text
    }

    /// One `  label    help` row; the help wraps at ``width`` and goes to the next line when
    /// the label is too long to leave two spaces.
    private func row(_ label: String, _ help: String) -> String {
        let lead = "  " + label
        let body = wrap(help, indent: helpColumn)
        if lead.count + 2 <= helpColumn {
            return lead + String(repeating: " ", count: helpColumn - lead.count) + body.dropFirst(helpColumn)
        }
        return lead + "\n" + body
    }

    /// Wraps one line at word boundaries, the continuation lines indented by `indent` spaces.
    private func hanging(_ text: String, indent: Int) -> String {
        // An option stays on one line with its value (`--batch <file>`).
        var words: [String] = []
        for word in text.split(separator: " ") {
            if word.hasPrefix("<"), let last = words.last, last.hasPrefix("-") || last.hasPrefix("[-") || last.hasPrefix("(-") {
                words[words.count - 1] += " " + word
            } else {
                words.append(String(word))
            }
        }
        var lines: [String] = []
        var line = ""
        for word in words {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
            }
            line += (line.allSatisfy { $0 == " " } ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Wraps `text` at word boundaries; every line indented by `indent` spaces and ended by a
    /// newline. Paragraph breaks (`\n`) are kept.
    private func wrap(_ text: String, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        var result = ""
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                if !line.isEmpty && indent + line.count + 1 + word.count > width {
                    result += pad + line + "\n"
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + word
            }
            result += (line.isEmpty ? "" : pad + line) + "\n"
        }
        return result
    }
}
