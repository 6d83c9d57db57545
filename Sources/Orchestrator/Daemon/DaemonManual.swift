import OrchestratorAPI

/// orchd's manual page, orchd(8), in man(7) roff, written from the text `orchd --help` prints
/// (``DaemonConfiguration/usage``: its overview, usage, option table and closing notes), so
/// the page and the help cannot drift. `man/orchd.8` is this text; a test keeps it so.
public enum DaemonManual {
    /// The whole page.
    public static func render(usage: String = DaemonConfiguration.usage, version: String = OrchdVersion.string) -> String {
        let lines = usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let overview = lines.first { $0.hasPrefix("OVERVIEW: ") }.map { String($0.dropFirst("OVERVIEW: ".count)) } ?? ""
        var options: [(label: String, help: String)] = []
        var notes: [String] = []
        var section = ""
        for line in lines {
            if line.hasPrefix("OPTIONS:") { section = "options"; continue }
            if line.hasPrefix("USAGE:") || line.hasPrefix("OVERVIEW:") { section = ""; continue }
            if section == "options" {
                if line.isEmpty { section = "notes"; continue }
                let body = line.drop { $0 == " " }
                let indent = line.count - body.count
                if indent <= 2, body.hasPrefix("-") {
                    // `--label VALUE   help`: the label ends at the first run of two spaces, or
                    // at one space before text that is not the label's value (`--drain-timeout SPAN How`).
                    let words = body.split(separator: " ", omittingEmptySubsequences: false)
                    var label: [Substring] = []
                    var rest = words[...]
                    while let word = rest.first, !word.isEmpty,
                          label.isEmpty || word.hasPrefix("-") || word.allSatisfy({ $0.isUppercase || $0 == "," }) || label.last?.hasSuffix(",") == true {
                        label.append(word)
                        rest = rest.dropFirst()
                    }
                    options.append((label.joined(separator: " "), rest.filter { !$0.isEmpty }.joined(separator: " ")))
                } else if !options.isEmpty {
                    options[options.count - 1].help += " " + body
                }
            } else if section == "notes", !line.isEmpty {
                notes.append(line)
            }
        }

        var text = """
            .\\" Generated from orchd's --help text by DaemonManual; do not edit.
            .TH ORCHD 8 "" "orchd \(version)" "System Administration"
            .SH NAME
            orchd \\- \(escape(overview.prefix(1).lowercased() + overview.dropFirst()))
            .SH SYNOPSIS
            .B orchd
            \(escape(String(DaemonConfiguration.shortUsage.dropFirst("orchd ".count))))
            .SH DESCRIPTION
            orchd is a job queue daemon: it keeps submitted commands in SQLite and runs them, N at a time per queue, each in its own cgroup and process group.
            It is driven by
            .BR orchctl (1)
            over a Unix socket and reports to systemd as a Type=notify service.
            .PP
            \(notes.map(escape).joined(separator: "\n"))
            .SH OPTIONS

            """
        for option in options {
            let label = option.label.split(separator: " ").map { word in
                word.hasPrefix("-") ? "\\fB\(escape(String(word)))\\fR" : "\\fI\(escape(String(word)))\\fR"
            }.joined(separator: " ")
            text += ".TP\n\(label)\n\(escape(option.help))\n"
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

    /// Escapes roff: backslashes, hyphens, and a `.` or `'` starting the text.
    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            default: result.append(character)
            }
        }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
        return result
    }
}
