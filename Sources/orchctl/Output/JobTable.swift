import FoundationEssentials
import OrchestratorAPI

/// The `orchctl status` table: one row per job; and the summary lines under it.
///
/// ```
/// ID  STATE      QUEUE    PRI  SUBMITTED  STARTED   DURATION  COMMAND
/// 7   failed(3)  default  0    12:14:43   12:14:43  1.5s      make test
/// ```
struct JobTable: Sendable {
    /// How to show times.
    var time = TimeFormatter()
    /// The widest the whole row may be, in characters (the command is cut to fit with `…`);
    /// `nil` means never cut (output to a pipe).
    var maximumWidth: Int?
    /// Whether an OWNER column (the submitter's login name) follows the ID
    /// (`status --all-users`).
    var showsOwner = false

    private static let headers = ["ID", "STATE", "QUEUE", "PRI", "SUBMITTED", "STARTED", "DURATION", "COMMAND"]

    /// Renders `jobs`, header first; `No jobs.` when there are none.
    /// - Parameter now: the current time, for running durations and the compact time format.
    func render(_ jobs: [Job], now: Date) -> String {
        guard !jobs.isEmpty else { return "No jobs.\n" }
        let headers = showsOwner ? ["ID", "OWNER"] + Self.headers.dropFirst() : Self.headers
        let rows = jobs.map { job in
            (showsOwner ? [job.id.description, QueueText.userName(job.submitterUid)] : [job.id.description]) + [
                JobText.state(of: job),
                job.spec.queue.rawValue,
                String(job.spec.priority),
                time.compact(job.submittedAt, now: now),
                job.startedAt.map { time.compact($0, now: now) } ?? "-",
                JobText.duration(job, now: now).map(TimeSpan.format) ?? "-",
                JobText.command(job),
            ]
        }
        // Every column but the last is padded to its widest cell.
        var widths = headers.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        let gap = 2
        let prefixWidth = widths.dropLast().reduce(0) { $0 + $1 + gap }
        // On a terminal the command fits the line; in a pipe it is still cut at a length no
        // one reads in a table (`show` has the whole command).
        let commandWidth = maximumWidth.map { max(12, $0 - prefixWidth) } ?? Self.maximumPipedCommandLength

        var text = ""
        for row in [headers] + rows {
            var line = ""
            for (column, cell) in row.enumerated() {
                if column == row.count - 1 {
                    line += Self.truncate(cell, to: commandWidth)
                } else {
                    line += cell + String(repeating: " ", count: widths[column] - cell.count + gap)
                }
            }
            text += line + "\n"
        }
        return text
    }

    /// `2 running, 5 queued, 10 finished`, from orchd's counts; waiting only when there are
    /// some; prefixed by `queue Q: ` for one queue.
    static func summary(_ counts: JobCounts, queue: QueueName? = nil) -> String {
        var parts = ["\(grouped(counts.running)) running", "\(grouped(counts.queued)) queued"]
        if counts.waiting > 0 { parts.append("\(grouped(counts.waiting)) waiting") }
        parts.append("\(grouped(counts.finished)) finished")
        return (queue.map { "queue \($0): " } ?? "") + parts.joined(separator: ", ")
    }

    /// The line under a table cut by `--limit`:
    /// `Showing the newest 100 of 12,345 jobs; use --all or --limit N.`
    /// - Parameters:
    ///   - shown: how many jobs are shown.
    ///   - total: how many match.
    ///   - state: the `--state` filter, named before "jobs".
    static func truncation(shown: Int, total: Int, state: String? = nil) -> String {
        let what = state.map { "\($0) jobs" } ?? "jobs"
        return "Showing the newest \(grouped(shown)) of \(grouped(total)) \(what); use --all or --limit N."
    }

    /// `12,345`: digits in groups of three.
    static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return (number < 0 ? "-" : "") + text
    }

    /// `2 running, 5 queued, 10 finished (3 not succeeded)`, counted over `jobs` (for
    /// `status ID...`); waiting only when there are some.
    static func summary(_ jobs: [Job]) -> String {
        var waiting = 0, queued = 0, running = 0, finished = 0, unsuccessful = 0
        for job in jobs {
            switch job.state {
            case .waiting: waiting += 1
            case .queued: queued += 1
            case .running: running += 1
            case .finished(let result):
                finished += 1
                if result != .succeeded { unsuccessful += 1 }
            }
        }
        var parts = ["\(running) running", "\(queued) queued"]
        if waiting > 0 { parts.append("\(waiting) waiting") }
        parts.append("\(finished) finished" + (unsuccessful > 0 ? " (\(unsuccessful) not succeeded)" : ""))
        return parts.joined(separator: ", ")
    }

    /// The longest command a table row shows when the output is not a terminal.
    static let maximumPipedCommandLength = 500

    private static func truncate(_ text: String, to width: Int?) -> String {
        guard let width, text.count > width else { return text }
        return String(text.prefix(width - 1)) + "…"
    }
}
