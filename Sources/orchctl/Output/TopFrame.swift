import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI

/// One screen of `orchctl top`: the queues with their running and queued counts and
/// throughput, the running jobs with their elapsed time and last line of output, and the
/// jobs that ended last. Built from a ``Snapshot`` of orchd; every line fits the width.
///
/// ```
/// orchd 0.1.0 at 12:14:43: 2 running, 1,200 queued, 0 waiting, 57 finished
///
/// QUEUE    RUNNING  QUEUED  WAITING  ENDED/MIN  PAUSED
/// default  2/4      1,200   0        12         -
///
/// RUNNING  ID  QUEUE    ELAPSED  COMMAND    LAST OUTPUT
///          7   default  1min 5s  make test  compiling foo.c
/// ```
struct TopFrame: Sendable {
    /// What orchd reported, read in one go.
    struct Snapshot: Sendable {
        /// orchd's version.
        var version: String
        /// How many jobs orchd holds in each state (GetInfo): the header's totals, which count
        /// the jobs of a removed queue too, as `info` does.
        var totals: JobCounts
        /// Every queue.
        var queues: [QueueInfo]
        /// The running jobs, in ID order.
        var running: [Job]
        /// The last line each running job wrote to standard output, by ID.
        var lastOutput: [JobID: String]
        /// The newest finished jobs, newest last.
        var recent: [Job]
    }

    /// The span throughput counts over, in seconds (ENDED/MIN).
    static let throughputWindow: TimeInterval = 60
    /// How many ended jobs the RECENT section shows at most.
    static let recentCount = 5

    /// How to show times.
    var time = TimeFormatter()
    /// The widest a line may be; `nil` for no limit (printed to a pipe).
    var width: Int?
    /// The most lines the frame may have; `nil` for no limit.
    var height: Int?
    /// Colour states.
    var colors = false

    /// The frame's lines.
    /// - Parameters:
    ///   - snapshot: what orchd reported.
    ///   - now: the current time, for elapsed times and throughput.
    func lines(_ snapshot: Snapshot, now: Date) -> [String] {
        var lines = ["orchd \(snapshot.version) at \(time.compact(now, now: now)): " + JobTable.summary(snapshot.totals), ""]

        // Queues, with how many of their jobs ended in the last minute.
        let window = now.addingTimeInterval(-Self.throughputWindow)
        var endedPerQueue: [QueueName: Int] = [:]
        for job in snapshot.recent where (job.finishedAt ?? .distantPast) >= window { endedPerQueue[job.spec.queue, default: 0] += 1 }
        var queueRows = [["QUEUE", "RUNNING", "QUEUED", "WAITING", "ENDED/MIN", "PAUSED"]]
        for queue in snapshot.queues {
            queueRows.append([
                queue.name.rawValue, "\(queue.jobs.running)/\(queue.concurrency)", JobTable.grouped(queue.jobs.queued),
                JobTable.grouped(queue.jobs.waiting), String(endedPerQueue[queue.name] ?? 0), queue.paused ? "paused" : "-",
            ])
        }
        lines += snapshot.queues.isEmpty ? ["No queues."] : Self.aligned(queueRows)
        lines.append("")

        // The ended jobs come last and give way first when the screen is short.
        var recentRows = [["ENDED", "ID", "RESULT", "QUEUE", "DURATION", "COMMAND"]]
        for job in snapshot.recent.suffix(Self.recentCount).reversed() {
            recentRows.append([
                job.finishedAt.map { time.relative($0, now: now) } ?? "-", job.id.description, state(JobText.state(of: job)),
                job.spec.queue.rawValue, JobText.duration(job, now: now).map(TimeSpan.format) ?? "-", JobText.command(job),
            ])
        }
        var runningRows = [["RUNNING", "ID", "QUEUE", "ELAPSED", "COMMAND", "LAST OUTPUT"]]
        for job in snapshot.running {
            let name = job.spec.name.map { $0.visible + ": " } ?? ""
            runningRows.append([
                "", job.id.description, job.spec.queue.rawValue, JobText.duration(job, now: now).map(TimeSpan.format) ?? "-",
                name + Self.cut(JobText.command(job), to: 40), (snapshot.lastOutput[job.id] ?? "").visible,
            ])
        }
        if snapshot.running.isEmpty { runningRows = [["RUNNING", "none"]] }
        var running = Self.aligned(runningRows)
        var recent = snapshot.recent.isEmpty ? [] : [""] + Self.aligned(recentRows)
        if let height {
            let room = max(0, height - lines.count)
            if running.count + recent.count > room {
                recent = Array(recent.prefix(max(0, room - running.count)))
                if running.count > room { running = Array(running.prefix(max(1, room - 1))) + ["… \(running.count - room + 1) more"] }
            }
        }
        lines += running + recent
        guard let width else { return lines }
        return lines.map { line in
            // Colour sequences take no columns: a line is cut on its plain text's width.
            DisplayWidth.of(Self.plain(line)) > width ? Self.truncateKeepingColours(line, to: width) : line
        }
    }

    /// `line` cut to `width` columns with `…`, as ``DisplayWidth/truncate(_:to:)`` cuts plain
    /// text, its SGR colour sequences kept (they take no columns); a colour still on at the
    /// cut is reset after the `…`.
    static func truncateKeepingColours(_ line: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        var result = ""
        var used = 0
        var escape: String?
        var coloured = false
        for character in line {
            if var sequence = escape {
                sequence.append(character)
                escape = character == "m" ? nil : sequence
                if character == "m" {
                    result += sequence
                    coloured = sequence != "\u{1B}[0m"
                }
                continue
            }
            if character == "\u{1B}" {
                escape = "\u{1B}"
                continue
            }
            let next = DisplayWidth.of(character)
            if used + next > width - 1 { break }
            used += next
            result.append(character)
        }
        return result + "…" + (coloured ? "\u{1B}[0m" : "")
    }

    /// The frame as text, one line each.
    func render(_ snapshot: Snapshot, now: Date) -> String {
        lines(snapshot, now: now).map { $0 + "\n" }.joined()
    }

    private func state(_ text: String) -> String {
        colors ? ColorMode.colored(state: text) : text
    }

    /// Rows with every column but the last padded to its widest cell (colour sequences not
    /// counted).
    private static func aligned(_ rows: [[String]]) -> [String] {
        var widths: [Int] = []
        for row in rows {
            for (index, cell) in row.enumerated() {
                let width = DisplayWidth.of(plain(cell))
                if index < widths.count { widths[index] = max(widths[index], width) } else { widths.append(width) }
            }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - DisplayWidth.of(plain(cell)) + 2)
            }.joined()
        }
    }

    private static func cut(_ text: String, to width: Int) -> String {
        DisplayWidth.truncate(text, to: width)
    }

    /// `text` without SGR colour sequences.
    static func plain(_ text: String) -> String {
        guard text.contains("\u{1B}") else { return text }
        var result = ""
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                if scalar == "m" { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
