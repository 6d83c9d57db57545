import CommandLineParsing
import OrchestratorAPI

/// The configuration file's manual page, orchd.conf(5), in man(7) roff, written from the same
/// option declarations as `orchd --help` (``DaemonConfiguration/bindings``, the keys in
/// ``DaemonConfiguration/fileKeys``), so the page, the help and the parser cannot drift.
/// `man/orchd.conf.5` is this text; a test keeps it so.
public enum ConfigurationManual {
    /// The settings of a `queue.NAME` line, with what each takes.
    static let queueSettings: [(name: String, value: String, help: String)] = [
        ("concurrency", "N", "Jobs of the queue run at once, 1 to 10000."),
        ("retry-base", "SPAN", "The first backoff before a failed job's next attempt."),
        ("retry-cap", "SPAN", "The longest backoff."),
        ("max-running-per-user", "N", "The most running jobs one user may have in the queue; 0: no limit."),
    ]

    /// The whole page.
    /// - Parameter version: the version named in the page's header.
    public static func render(version: String = OrchdVersion.string) -> String {
        var text = """
            .\\" Generated from orchd's option declarations by ConfigurationManual; do not edit.
            .TH ORCHD.CONF 5 "" "orchd \(version)" "File Formats"
            .SH NAME
            orchd.conf \\- configuration file of the orchd job queue daemon
            .SH SYNOPSIS
            .I /etc/orchd/orchd.conf
            (the system service)
            .br
            .I ${XDG_CONFIG_HOME:\\-~/.config}/orchd/orchd.conf
            (a per\\-user orchd)
            .SH DESCRIPTION
            .BR orchd (8)
            reads this file at start\\-up and again on SIGHUP
            .RB ( "orchctl reload" ).
            Each line is
            .IB key " = " value\\fR;
            blank lines and lines starting with
            .B #
            are ignored, and lines may end in LF or CRLF.
            A key given twice is refused, naming both lines; a bad value is refused naming its line, and orchd keeps its current settings.
            .PP
            Each setting is taken from the command line, else this file, else its default, at start\\-up and at every reload; so a key taken out of the file goes back to its default at the next reload, unless a flag sets it.
            The keys are orchd's options without the dashes; paths and containment are set on the command line only.
            .SH KEYS

            """
        let specs = DaemonConfiguration.bindings.map(\.spec)
        for key in DaemonConfiguration.fileKeys {
            guard let option = specs.first(where: { $0.name == key }) else { continue }
            var help = option.help
            if let value = option.defaultValue { help += " (default: \(value))" }
            text += ".TP\n\\fB\(Roff.escape(key))\\fR = \\fI\(Roff.escape((option.valueName ?? "value").uppercased()))\\fR\n\(Roff.escape(help))\n"
        }
        text += """
            .SH QUEUES
            The queue
            .B default
            always exists; a line
            .IB queue.NAME " = " setting=value ", ..."
            declares the queue NAME (if it is not declared yet) and applies the settings it gives, at each start and reload.
            An empty value declares the queue with the defaults.
            Taking the line out of the file does not remove the queue
            .RB ( "orchctl queue remove" " does)."
            The settings, separated by commas, each at most once:

            """
        for setting in queueSettings {
            text += ".TP\n\\fB\(Roff.escape(setting.name))\\fR=\\fI\(setting.value)\\fR\n\(Roff.escape(setting.help))\n"
        }
        text += """
            .PP
            A SPAN is a time span such as 90s, 1min30s or 2h (see
            .BR systemd.time (7)).
            .SH EXAMPLE
            .nf
            concurrency = 4
            kill\\-grace = 10s
            retention\\-age = 30d
            allow\\-users = alice, bob, @builders
            queue.builds = concurrency=2, retry\\-base=10s, retry\\-cap=10min
            queue.io =
            .fi
            .SH SEE ALSO
            .BR orchd (8),
            .BR orchctl (1),
            .BR systemd.time (7)

            """
        return text
    }
}
