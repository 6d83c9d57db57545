import CommandLineParsing
/// orchctl's manual page, orchctl(1), in man(7) roff, written from the command table like
/// `--help`, so the two cannot drift. `man/orchctl.1` is this text (a test keeps it so) and
/// `orchctl manual` prints it.
struct ManPage: Sendable {
    /// The top-level commands (a group carries its subcommands).
    var commands: [CommandSpec]
    /// The version in the footer.
    var version: String

    /// The whole page.
    func render() -> String {
        var text = """
            .\\" Generated from orchctl's command table by 'orchctl manual'; do not edit.
            .TH ORCHCTL 1 "" "orchd \(version)" "User Commands"
            .SH NAME
            orchctl \\- control orchd, the task orchestration daemon
            .SH SYNOPSIS
            .B orchctl
            [\\fB\\-\\-socket\\fR \\fIpath\\fR] [\\fB\\-\\-json\\fR] \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]
            .SH DESCRIPTION
            orchd keeps a durable queue of commands and runs them, N at a time, as a systemd service.
            .B orchctl
            submits jobs to it and reports on them over its Unix socket (Varlink).
            Without a command, it runs
            .BR "orchctl status" .
            Every command takes
            .B \\-\\-help
            for the text below.
            .SH GLOBAL OPTIONS
            These go before or after the command.

            """
        for option in GlobalOptions.specs + [GlobalOptions.help, GlobalOptions.version] {
            text += Roff.item(option)
        }
        text += ".SH COMMANDS\n"
        for command in commands.flatMap(\.flattened) {
            text += ".SS \"\(Roff.escape(command.name))\"\n"
            text += Self.paragraph(command.abstract)
            text += ".PP\n.B orchctl\n" + Roff.escape(command.usage) + "\n"
            if let discussion = command.discussion {
                for paragraph in discussion.split(separator: "\n", omittingEmptySubsequences: true) {
                    text += ".PP\n" + Self.paragraph(String(paragraph))
                }
            }
            for argument in command.arguments {
                text += ".TP\n\\fI\(Roff.escape(argument.label))\\fR\n" + Self.paragraph(argument.help)
            }
            for option in command.options {
                text += Roff.item(option)
            }
            if command.isGroup {
                text += ".PP\nSubcommands: " + command.subcommands.map { "\\fB\(Roff.escape($0.word))\\fR" }.joined(separator: ", ") + ".\n"
            }
        }
        text += """
            .SH EXIT STATUS
            .TP
            .B 0
            Success.
            .TP
            .B 1
            The request failed: a job failed, a job does not exist, orchd refused.
            .TP
            .B 64
            The command line is wrong.
            .TP
            .B 69
            orchd cannot be reached (or did not come back within \\fB\\-\\-reconnect\\-timeout\\fR), it was stopping and no orchd took the job within \\fB\\-\\-reconnect\\-timeout\\fR, or it refused the connection for 10 s (too many of the user's, or short of file descriptors), doing nothing.
            .TP
            .B 77
            Permission denied.
            .TP
            .B 124
            \\fBwait \\-\\-timeout\\fR ran out.
            .PP
            \\fBwait\\fR and \\fBsubmit \\-\\-wait\\fR exit with the job's own status.
            .SH ENVIRONMENT
            .TP
            .B ORCHD_SOCKET
            The control socket, when \\fB\\-\\-socket\\fR is not given.
            .TP
            .B COLUMNS
            The width tables fit on a terminal.
            .TP
            .B NO_COLOR
            When set to anything but the empty string, no colours (\\fB\\-\\-color auto\\fR).
            .SH SEE ALSO
            .BR orchd (8),
            .BR systemd.time (7)

            """
        return text
    }

    /// `text` as roff body lines: escaped, and no line starting with a control character.
    private static func paragraph(_ text: String) -> String { Roff.escape(text) + "\n" }
}
