import FoundationEssentials
import OrchestratorAPI

/// The `orchctl status` table: one row per job; and the summary lines under it.
///
/// ```
/// ID  STATE      QUEUE    PRI  NAME     SUBMITTED  STARTED   DURATION  COMMAND
/// 7   failed(3)  default  0    nightly  12:14:43   12:14:43  1.5s      make test
/// ```
///
/// The NAME column appears when any listed job has a name. Widths are counted in terminal
/// columns (``DisplayWidth``: CJK and emoji take two). With a ``maximumWidth`` (a terminal),
/// every line fits it: the command is cut with `…`, never wrapped; on a narrow terminal the
/// least telling columns go first (PRI, SUBMITTED, DURATION, QUEUE, STARTED) and a long name
/// is cut too.
struct JobTable: Sendable {
    /// How to show times.
    var time = TimeFormatter()
    /// The widest a line may be, in terminal columns; `nil` means never cut (output to a
    /// pipe; the command is still cut at ``maximumPipedCommandLength``).
    var maximumWidth: Int?
    /// Whether an OWNER column (the submitter's login name) follows the ID
    /// (`status --all-users`).
    var showsOwner = false
    /// The owners' login names, from orchd (``OrchdConnection/userNames(_:)``); an owner
    /// without one shows as their uid.
    var userNames: [UInt32: String] = [:]
    /// Show times as distances (`4m ago`) instead of clock times: on a terminal.
    var relativeTimes = false
    /// Colour the STATE column (``ColorMode``).
    var colors = false

    /// The fewest columns a cut command keeps before other columns are dropped.
    static let minimumCommandWidth = 12
    /// The widest a NAME cell is, in columns (a name is free text).
    static let maximumNameWidth = 24

    /// One column: its header, and whether it goes when the line is too narrow (in the order
    /// of ``dropOrder``).
    private enum Column: String, CaseIterable {
        case id = "ID", owner = "OWNER", state = "STATE", queue = "QUEUE", priority = "PRI", name = "NAME", submitted = "SUBMITTED",
             started = "STARTED", duration = "DURATION", command = "COMMAND"

        /// The columns dropped, in turn, while a line does not fit.
        static let dropOrder: [Column] = [.priority, .submitted, .duration, .queue, .started]
    }

    /// Renders `jobs`, header first; `No jobs.` when there are none.
    /// - Parameter now: the current time, for running durations, relative times and the
    ///   compact time format.
    func render(_ jobs: [Job], now: Date) -> String {
        guard !jobs.isEmpty else { return "No jobs.\n" }
        var columns = Column.allCases
        if !jobs.contains(where: { !($0.spec.name ?? "").isEmpty }) { columns.removeAll { $0 == .name } }
        if !showsOwner { columns.removeAll { $0 == .owner } }
        let rows = jobs.map { job in Dictionary(uniqueKeysWithValues: columns.map { ($0, cell($0, of: job, now: now)) }) }

        var widths: [Column: Int] = [:]
        for column in columns {
            widths[column] = rows.reduce(DisplayWidth.of(column.rawValue)) { max($0, DisplayWidth.of($1[column] ?? "")) }
        }
        widths[.name] = widths[.name].map { min($0, Self.maximumNameWidth) }
        let gap = 2
        func prefixWidth() -> Int { columns.dropLast().reduce(0) { $0 + (widths[$1] ?? 0) + gap } }
        var commandWidth = Self.maximumPipedCommandLength
        if let maximumWidth {
            var droppable = Column.dropOrder
            while prefixWidth() + Self.minimumCommandWidth > maximumWidth, !droppable.isEmpty {
                let dropped = droppable.removeFirst()
                columns.removeAll { $0 == dropped }
            }
            if let name = widths[.name], columns.contains(.name) {
                let excess = prefixWidth() + Self.minimumCommandWidth - maximumWidth
                if excess > 0 { widths[.name] = max(4, name - excess) }
            }
            commandWidth = max(1, maximumWidth - prefixWidth())
        }

        var text = ""
        let header = Dictionary(uniqueKeysWithValues: columns.map { ($0, $0.rawValue) })
        for (index, row) in ([header] + rows).enumerated() {
            var line = ""
            var plain = ""
            for column in columns {
                let cell = row[column] ?? ""
                if column == .command {
                    let cut = DisplayWidth.truncate(cell, to: commandWidth)
                    line += cut
                    plain += cut
                    continue
                }
                let width = widths[column] ?? 0
                let fitted = DisplayWidth.truncate(cell, to: width)
                let padding = String(repeating: " ", count: width - DisplayWidth.of(fitted) + gap)
                line += (colors && index > 0 && column == .state ? ColorMode.colored(state: fitted) : fitted) + padding
                plain += fitted + padding
            }
            // However the columns came out, a line on a terminal never wraps.
            if let maximumWidth, DisplayWidth.of(plain) > maximumWidth {
                line = DisplayWidth.truncate(plain, to: maximumWidth)
            }
            text += line + "\n"
        }
        return text
    }

    /// The text of one cell.
    private func cell(_ column: Column, of job: Job, now: Date) -> String {
        switch column {
        case .id: return job.id.description
        case .owner: return userNames[job.submitterUid] ?? String(job.submitterUid)
        case .state: return JobText.state(of: job)
        case .queue: return job.spec.queue.rawValue
        case .priority: return String(job.spec.priority)
        case .name: return (job.spec.name ?? "").visible
        case .submitted: return timeText(job.submittedAt, now: now)
        case .started:
            switch job.state {
            case .running, .finished:
                return job.startedAt.map { timeText($0, now: now) } ?? "-"
            case .waiting, .queued:
                // Not started, or between attempts: when the next attempt may start, if that is
                // still ahead. Never the previous attempt's start, which reads as this one's.
                guard let start = job.spec.notBefore, start > now else { return "-" }
                return relativeTimes ? time.relative(start, now: now) : time.compactAhead(start, now: now)
            }
        case .duration: return JobText.duration(job, now: now).map(TimeSpan.format) ?? "-"
        case .command: return JobText.command(job)
        }
    }

    private func timeText(_ date: Date, now: Date) -> String {
        relativeTimes ? time.relative(date, now: now) : time.compact(date, now: now)
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
    ///   - total: how many match; `nil` when that is not known (the result and label filters
    ///     have no counts).
    ///   - state: the `--state` filter, named before "jobs".
    static func truncation(shown: Int, total: Int?, state: String? = nil) -> String {
        let what = state.map { "\($0) jobs" } ?? "jobs"
        guard let total else {
            return "Showing the newest \(grouped(shown)) matching \(shown == 1 ? "job" : "jobs"); use --all or --limit N."
        }
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
}
