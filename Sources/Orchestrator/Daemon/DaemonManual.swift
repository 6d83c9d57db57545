import CommandLineParsing
import OrchestratorAPI

/// orchd's manual page, orchd(8), in man(7) roff, written from the declaration `orchd --help`
/// is rendered from (``DaemonConfiguration/command``: its abstract, usage, discussion and
/// options), so the page and the help cannot drift. `man/orchd.8` is this text; a test keeps
/// it so.
public enum DaemonManual {
    /// The whole page.
    /// - Parameters:
    ///   - command: orchd's command declaration.
    ///   - version: the version named in the page's header.
    public static func render(command: CommandSpec = DaemonConfiguration.command, version: String = OrchdVersion.string) -> String {
        let overview = command.abstract
        var text = """
            .\\" Generated from orchd's option declarations by DaemonManual; do not edit.
            .TH ORCHD 8 "" "orchd \(version)" "System Administration"
            .SH NAME
            orchd \\- \(Roff.escape(overview.prefix(1).lowercased() + overview.dropFirst()))
            .SH SYNOPSIS
            .B orchd
            \(Roff.escape(command.usage))
            .SH DESCRIPTION
            orchd is a job queue daemon: it keeps submitted commands in SQLite and runs them, N at a time per queue, each in its own cgroup and process group.
            It is driven by
            .BR orchctl (1)
            over a Unix socket and reports to systemd as a Type=notify service.
            .PP
            \((command.discussion ?? "").split(separator: "\n").map { Roff.escape(String($0)) }.joined(separator: "\n.PP\n"))
            .SH OPTIONS

            """
        for option in command.options + [GlobalOptions.version, GlobalOptions.help] where !option.isHidden {
            text += Roff.item(option)
        }
        text += """
            .SH SIGNALS
            .TP
            .B SIGHUP
            Re\\-read the configuration file.
            .TP
            .B SIGTERM
            Stop: running jobs get \\fB\\-\\-drain\\-timeout\\fR to finish, then are torn down and recorded interrupted.
            .SH FILES
            .TP
            .I /etc/orchd/orchd.conf
            The configuration file of the system service.
            .TP
            .I /var/lib/orchd
            The database, lock and job logs of the system service.
            .TP
            .I /run/orchd/orchd.sock
            The control socket of the system service.
            .SH SEE ALSO
            .BR orchctl (1),
            .BR systemd.time (7),
            .BR systemd.service (5)

            """
        return text
    }
}
