import CommandLineParsing
import OrchestratorAPI

/// How `queues`, `queue set`, `pause` and `resume` show queues.
enum QueueText {
    private static let headers = ["NAME", "CONCURRENCY", "PAUSED", "RUNNING", "QUEUED", "WAITING", "FINISHED", "RETRY BASE/CAP"]

    /// The `orchctl queues` table, header first; `No queues.` when there are none. When any
    /// queue has hooks, a second table under it lists them, one per line:
    ///
    /// ```
    /// NAME     CONCURRENCY  PAUSED  RUNNING  QUEUED  WAITING  FINISHED  RETRY BASE/CAP
    /// builds   2            no      0        0       0        3         1s/10min
    /// default  2            no      2        10      0        140       1s/10min
    ///
    /// QUEUE   HOOK    COMMAND
    /// builds  failed  notify-send "job $ORCHD_JOB_ID failed"
    /// ```
    /// - Parameters:
    ///   - queues: the queues, as orchd lists them.
    ///   - userNames: login names for the per-user table's USER column
    ///     (``OrchdConnection/userNames(_:)``); a user without one shows as their uid.
    static func table(_ queues: [QueueInfo], userNames: [UInt32: String] = [:]) -> String {
        guard !queues.isEmpty else { return "No queues.\n" }
        let rows = queues.map { queue in
            [
                queue.name.rawValue, String(queue.concurrency), queue.paused ? "yes" : "no",
                String(queue.jobs.running), String(queue.jobs.queued), String(queue.jobs.waiting),
                String(queue.jobs.finished), "\(span(queue.retryBaseUSec))/\(span(queue.retryCapUSec))",
            ]
        }
        return TextTable.render([headers] + rows) + executorsTable(queues) + hooksTable(queues) + perUserTable(queues, userNames: userNames)
    }

    /// The running jobs of each user by queue (orchd sends them to root and the admin group
    /// only), and each queue's per-user limit, as a table preceded by a blank line; empty
    /// when no queue has a limit or a running job to show. Where orchd sent no counts (to a
    /// user who is no admin), RUNNING is `-`, not a 0 that the user's own running jobs belie.
    ///
    /// ```
    /// QUEUE    USER   RUNNING  LIMIT
    /// default  alice  1        1
    /// default  bob    1        1
    /// ```
    static func perUserTable(_ queues: [QueueInfo], userNames: [UInt32: String]) -> String {
        let rows = queues.flatMap { queue in
            let limit = queue.maxRunningPerUser.map(String.init) ?? "-"
            let running = (queue.runningPerUser ?? [:]).compactMap { key, count in UInt32(key).map { ($0, count) } }.sorted { $0.0 < $1.0 }
            if running.isEmpty && queue.maxRunningPerUser != nil {
                return [[queue.name.rawValue, "-", queue.runningPerUser == nil ? "-" : "0", limit]]
            }
            return running.map { [queue.name.rawValue, userNames[$0.0] ?? String($0.0), String($0.1), limit] }
        }
        guard !rows.isEmpty else { return "" }
        return "\n" + TextTable.render([["QUEUE", "USER", "RUNNING", "LIMIT"]] + rows)
    }

    /// The owners the per-user table lists (their login names are asked of orchd).
    static func perUserOwners(_ queues: [QueueInfo]) -> Set<UInt32> {
        Set(queues.flatMap { ($0.runningPerUser ?? [:]).keys.compactMap { UInt32($0) } })
    }

    /// The queues whose jobs do not run on this machine, as a table preceded by a blank line:
    /// the executor, its Slurm partition and options, and whether Slurm answered orchd's last
    /// call (`yes`, `no: WHAT IT SAID`, or `-` before the first); empty when every queue is local.
    ///
    /// ```
    /// QUEUE  EXECUTOR  PARTITION  OPTIONS   SLURM ANSWERED
    /// hpc    slurm     batch      --mem=2G  yes
    /// ```
    static func executorsTable(_ queues: [QueueInfo]) -> String {
        let rows = queues.filter { ($0.executor ?? "local") != "local" }.map { queue in
            [
                queue.name.rawValue, queue.executor ?? "-", queue.slurm?.partition?.visible ?? "-",
                queue.slurm.map { $0.options.isEmpty ? "-" : $0.options.map(\.visible).joined(separator: " ") } ?? "-",
                answered(queue.slurm),
            ]
        }
        guard !rows.isEmpty else { return "" }
        return "\n" + TextTable.render([["QUEUE", "EXECUTOR", "PARTITION", "OPTIONS", "SLURM ANSWERED"]] + rows)
    }

    /// Whether Slurm answered orchd's last call: `yes`, `no: WHAT IT SAID`, `-` before the first.
    static func answered(_ slurm: QueueInfo.SlurmSettings?) -> String {
        switch slurm?.answered {
        case true?: "yes"
        case false?: "no" + (slurm?.lastError.map { ": " + $0.visible } ?? "")
        case nil: "-"
        }
    }

    /// The hooks of `queues` as a table preceded by a blank line, sorted by queue (as given)
    /// then event kind; empty when no queue has a hook.
    static func hooksTable(_ queues: [QueueInfo]) -> String {
        let rows = queues.flatMap { queue in
            queue.hooks.sorted { $0.key < $1.key }.map { [queue.name.rawValue, $0.key, $0.value.visible] }
        }
        guard !rows.isEmpty else { return "" }
        return "\n" + TextTable.render([["QUEUE", "HOOK", "COMMAND"]] + rows)
    }
    /// One queue's settings as aligned `key: value` lines.
    /// One line per hook, `on failed: COMMAND`, sorted by event kind.
    static func settings(_ queue: QueueInfo) -> String {
        KeyValueLines.render([
            ("queue", queue.name.rawValue),
            ("concurrency", String(queue.concurrency)),
            ("paused", queue.paused ? "yes" : "no"),
            ("retry base", span(queue.retryBaseUSec)),
            ("retry cap", span(queue.retryCapUSec)),
        ] + (queue.maxRunningPerUser.map { [("max running per user", String($0))] } ?? []) + executorLines(queue)
            + queue.hooks.sorted { $0.key < $1.key }.map { ("on \($0.key)", $0.value.visible) })
    }

    /// The `executor`, `slurm partition`, `slurm options` and `slurm answered` lines of a queue
    /// that does not run its jobs locally; none for a local one.
    static func executorLines(_ queue: QueueInfo) -> [(String, String)] {
        guard let executor = queue.executor, executor != "local" else { return [] }
        var lines = [("executor", executor)]
        if let slurm = queue.slurm {
            lines.append(("slurm partition", slurm.partition?.visible ?? "-"))
            lines.append(("slurm options", slurm.options.isEmpty ? "-" : slurm.options.map(\.visible).joined(separator: " ")))
            lines.append(("slurm answered", answered(slurm)))
        }
        return lines
    }

    /// A span in microseconds, as `TimeSpan.format` writes it.
    static func span(_ microseconds: Int64) -> String {
        TimeSpan.format(Duration(microseconds: microseconds))
    }
}

/// Left-aligned columns separated by two spaces, the last column unpadded.
enum TextTable {
    /// Renders `rows` (the header is simply the first row), each ending with a newline.
    static func render(_ rows: [[String]]) -> String {
        var widths: [Int] = []
        for row in rows {
            for (column, cell) in row.enumerated() {
                if column < widths.count { widths[column] = max(widths[column], cell.count) } else { widths.append(cell.count) }
            }
        }
        var text = ""
        for row in rows {
            var line = ""
            for (column, cell) in row.enumerated() {
                line += column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count + 2)
            }
            text += line + "\n"
        }
        return text
    }
}
